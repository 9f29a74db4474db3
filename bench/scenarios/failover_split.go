package scenarios

// restart-unsafe and restart-delayed: the case behind the delayed-restart
// rule of the Redlock write-up. Client A reaches only a majority [0, q) of
// a cluster's n servers, client B only the majority [n-q, n); they share
// the servers [n-q, q) (one of five). A acquires; the shared servers are
// killed and restarted at once (unsafe) or after one lease (delayed); then
// B tries. A server that restarts without the state it had (Redis without
// persistence) lets B's majority form while A still believes it holds the
// lock: a double grant. Both clients reach the servers through the
// embedded fault proxy; their unreachable paths refuse connections (the
// link is closed), so a try to them fails at once instead of waiting for a
// client read timeout.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/faultproxy"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
)

// writeEvery is how often A writes to the guarded store while it believes
// it holds the lock.
const writeEvery = 10 * time.Millisecond

// splitClient opens the contender for one client through its own proxy
// paths, reaching only the servers in [from, to).
func splitClient(ctx context.Context, env *bench.Env, proxy *faultproxy.Proxy, name string, from, to int) (bench.Locker, error) {
	v, err := proxy.View(name, env.Addrs)
	if err != nil {
		return nil, err
	}
	addrs := v.Addrs()
	for i, l := range v.Links {
		if i < from || i >= to {
			if err := l.Close(); err != nil {
				return nil, err
			}
		}
	}
	l, err := env.Contender.Open(ctx, addrs, env.Lease)
	if err != nil {
		return nil, fmt.Errorf("failover: opening %s for client %s: %w", env.Contender.Name, name, err)
	}
	return l, nil
}

// splitResult is what one trial saw.
type splitResult struct {
	aGranted, bGranted bool
	doubles, unsafe    int
	restart            time.Duration
}

// runSplit runs the trials of restart-unsafe (delayed false) or
// restart-delayed for env's contender.
func runSplit(ctx context.Context, env *bench.Env, cfg FailoverConfig, delayed bool) (results.Raw, error) {
	n := len(env.Servers)
	switch {
	case n == 1:
		return results.Raw{Skipped: noSplit}, nil
	case n < 3:
		return results.Raw{Skipped: tooFewToSplit}, nil
	}
	q := n/2 + 1
	proxy := faultproxy.New()
	defer proxy.Close()
	a, err := splitClient(ctx, env, proxy, "A", 0, q)
	if err != nil {
		return results.Raw{}, err
	}
	defer a.Close()
	b, err := splitClient(ctx, env, proxy, "B", n-q, n)
	if err != nil {
		return results.Raw{}, err
	}
	defer b.Close()
	shared := env.Servers[n-q : q]

	begin := time.Now()
	counts := map[string]int64{"trials": int64(cfg.Trials)}
	var errs []string
	var doubles, unsafe int
	var restart time.Duration
	for range cfg.Trials {
		r, err := splitTrial(ctx, env, a, b, shared, delayed)
		if errors.Is(err, bench.ErrNotSupported) {
			return results.Raw{Skipped: fmt.Sprintf(cannotFaultFmt, err)}, nil
		}
		if ctx.Err() != nil {
			return results.Raw{}, ctx.Err()
		}
		if err != nil {
			errs = load.NoteError(errs, err.Error())
		}
		if !r.aGranted {
			counts["a_not_granted"]++
			continue
		}
		if r.bGranted {
			counts["b_granted"]++
		}
		doubles += r.doubles
		unsafe += r.unsafe
		restart = max(restart, r.restart)
	}
	counts["double_grants"], counts["unsafe_writes"] = int64(doubles), int64(unsafe)
	fo := results.FailoverMetrics
	raw := results.Raw{
		Seconds: time.Since(begin).Seconds(),
		Counts:  counts,
		Errors:  errs,
		Metrics: []results.Metric{
			fo.DoubleGrants.Of(float64(doubles)),
			fo.UnsafeWrites.Of(float64(unsafe)),
			fo.BGranted.Of(float64(counts["b_granted"])),
			fo.RestartMs.Of(ms(restart)),
		},
	}
	return raw, nil
}

// splitTrial runs one trial on a fresh key. Errors are noted; a trial in
// which A got no lock proves nothing and is counted apart.
func splitTrial(ctx context.Context, env *bench.Env, a, b bench.Locker, shared []bench.Server, delayed bool) (splitResult, error) {
	var r splitResult
	key := "split-" + randomHex()
	store := guardedstore.NewStore(false)

	actx, cancel := context.WithTimeout(ctx, 2*env.Lease)
	ha, err := a.Acquire(actx, key)
	cancel()
	if err != nil {
		return r, fmt.Errorf("failover: client A: %w", err)
	}
	r.aGranted = true
	ga := guardedstore.Grant{Client: "A", Lock: key, At: check.Now()}
	// A writes while it believes it holds the lock.
	stopA := make(chan struct{})
	aDone := make(chan check.Mono, 1)
	go func() {
		t := time.NewTicker(writeEvery)
		defer t.Stop()
		for {
			store.Apply(guardedstore.Write{Client: "A", Lock: key})
			select {
			case <-ha.Lost():
				aDone <- check.Now()
				return
			case <-stopA:
				aDone <- 0
				return
			case <-t.C:
			}
		}
	}()
	release := func() {
		close(stopA)
		end := <-aDone
		_ = ha.Release(context.WithoutCancel(ctx))
		if end == 0 {
			end = check.Now()
		}
		ga.End = end
	}

	// Kill the shared servers right after A's grant, so that A's own
	// keep-alive (if it has one) is as far away as it can be.
	var down []bench.Server
	defer func() { _ = restartAll(context.WithoutCancel(ctx), down) }()
	for _, s := range shared {
		if err := s.Kill(ctx); err != nil {
			release()
			return r, fmt.Errorf("failover: %s: %w", s.Name(), err)
		}
		down = append(down, s)
	}
	if delayed {
		if err := bench.Sleep(ctx, env.Lease); err != nil {
			release()
			return r, err
		}
	}
	t0 := time.Now()
	err = restartAll(ctx, down)
	r.restart = time.Since(t0)
	down = nil
	if err != nil {
		release()
		return r, fmt.Errorf("failover: restart: %w", err)
	}

	bctx, cancel := context.WithTimeout(ctx, 2*env.Lease)
	hb, err := b.Acquire(bctx, key)
	cancel()
	grants := []guardedstore.Grant{ga}
	if err == nil {
		r.bGranted = true
		gb := guardedstore.Grant{Client: "B", Lock: key, At: check.Now()}
		store.Apply(guardedstore.Write{Client: "B", Lock: key})
		_ = bench.Sleep(ctx, writeEvery)
		_ = hb.Release(context.WithoutCancel(ctx))
		gb.End = check.Now()
		grants = append(grants, gb)
	}
	// Give A's client time to notice, as it would in production, before
	// its grant ends with the release.
	select {
	case <-ha.Lost():
	case <-time.After(env.Lease):
	case <-ctx.Done():
	}
	release()
	grants[0] = ga
	an := guardedstore.Analyze(store.History(), grants)
	r.doubles, r.unsafe = len(an.DoubleGrants), len(an.Unsafe)
	return r, nil
}
