package scenarios

// primary-lost, primary-lost-fast and no-fence: the high-availability
// pattern of monolock's documentation, measured on a standby pair
// (bench.Contender.Standby): a primary and a passive standby, one address
// the clients know, and a failover mechanism that watches the primary's
// /readyz and moves the address.
//
// The address is the bench's own mover (bench/faults/addrmove): a TCP
// forwarder to the primary that a move switches to the standby. It is not
// a kernel address move. With the fence, the move resets every established
// connection, as taking a virtual IP away breaks the sessions to the old
// host; without it (no-fence) the established connections keep the old
// primary, as a DNS or load-balancer switch does.
//
// primary-lost freezes the primary (SIGSTOP: its sockets stay open and
// nothing answers, as a host that stopped answering); the watcher finds
// /readyz failing and moves the address with the fence. D is measured
// from the fault to the move. primary-lost uses the docs' keepalived
// example (every 1 s, fall 2), primary-lost-fast every 100 ms, fall 2, so
// that D scales visibly. no-fence moves the address at the fault without
// the fence while the primary stays alive and serving: the two servers
// serve at once and grant the same names.

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/addrmove"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/bench/output/results"
)

// Standby variants.
const (
	FailoverPrimaryLost     = "primary-lost"
	FailoverPrimaryLostFast = "primary-lost-fast"
	FailoverNoFence         = "no-fence"
)

// watch is the failover mechanism: GET /readyz on the primary's
// operations port every interval, each check bounded by the interval,
// and the address moved after fall failures in a row (keepalived's
// vrrp_script interval and fall; a fresh connection per check, as its
// curl makes).
type watch struct {
	interval time.Duration
	fall     int
}

var (
	// keepalivedWatch is the docs' keepalived example.
	keepalivedWatch = watch{interval: time.Second, fall: 2}
	fastWatch       = watch{interval: 100 * time.Millisecond, fall: 2}
)

func (w watch) String() string {
	return fmt.Sprintf("/readyz every %v (each check bounded by it), moved after %d failures in a row", w.interval, w.fall)
}

// expected is about what detection and switch take: fall checks after
// the fault and the phase of the first.
func (w watch) expected() time.Duration { return time.Duration(w.fall+1) * w.interval }

// The shared load of the standby variants, beside the steady workers:
// sharedWorkers clients on one name, each holding it sharedHold, and
// longWorkers clients on another name, each holding it until it learns it
// lost it (the holder across the fault and its waiter); all write to a
// fenced and an unfenced guarded store every writeEvery while they
// believe they hold their lock.
const (
	sharedWorkers = 4
	sharedHold    = 50 * time.Millisecond
	longWorkers   = 2
)

// Skip reasons of the standby variants.
const (
	noStandby   = "no standby: not an active–passive pair; its failover figures are restart (and minority-down for a cluster)"
	standbyPair = "a standby pair: measured by primary-lost, primary-lost-fast and no-fence; a restart on the same address is its single server's row"
	noOps       = "the primary has no operations address: the failover watcher cannot read /readyz"
)

func skipUnlessStandby(c bench.Contender) string {
	if !c.Standby {
		return noStandby
	}
	return ""
}

func skipStandby(c bench.Contender) string {
	if c.Standby {
		return standbyPair
	}
	return ""
}

// standbyVariants are the variants of the standby pair.
func standbyVariants(c FailoverConfig) []bench.Variant {
	lost := func(name string, w watch) bench.Variant {
		return bench.Variant{
			Name: name, Params: results.VariantParams{Workers: c.Workers + sharedWorkers + longWorkers, Fault: results.FaultPrimaryLost},
			MaxRepetitions: failoverRepetitions, Skip: skipUnlessStandby,
			Estimate: c.Before + w.expected() + c.After + restartCost/2,
			Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
				return runStandby(ctx, env, c, w, true)
			},
		}
	}
	return []bench.Variant{
		lost(FailoverPrimaryLost, keepalivedWatch),
		lost(FailoverPrimaryLostFast, fastWatch),
		{
			Name: FailoverNoFence, Params: results.VariantParams{Workers: c.Workers + sharedWorkers + longWorkers, Fault: results.FaultSwitchNoFence},
			MaxRepetitions: failoverRepetitions, Skip: skipUnlessStandby,
			Estimate: c.Before + c.After + restartCost/2,
			Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
				return runStandby(ctx, env, c, watch{}, false)
			},
		},
	}
}

// standbySettings describe the standby variants for results.json.
func standbySettings() results.Settings {
	return results.Settings{
		"standby_address": "a TCP forwarder of the bench (bench/faults/addrmove) at the one address the clients dial, forwarding to the primary; the move switches new connections to the standby and, with the fence, resets every established one (the client side with an RST), as a virtual IP taken away breaks the sessions; it is not a kernel address move",
		"standby_watch":   FailoverPrimaryLost + ": " + keepalivedWatch.String() + " (the docs' keepalived example); " + FailoverPrimaryLostFast + ": " + fastWatch.String(),
		"standby_fault":   FailoverPrimaryLost + ", " + FailoverPrimaryLostFast + ": the primary frozen (SIGSTOP: sockets open, nothing answers, as a host that stopped answering), thawed after the variant; D from just before the freeze to the move; " + FailoverNoFence + ": the address moved at the fault without the fence, the primary alive and serving its established sessions (a DNS or load-balancer switch)",
		"standby_load":    fmt.Sprintf("the steady workers (the restart figures) plus %d clients on one name holding it %v, and %d on another each holding it until it learns the loss (holder_stop_ms: the first such loss after the fault); all write to a fenced and an unfenced guarded store every %v while they believe they hold the lock; double grants and stale writes by guardedstore.Analyze", sharedWorkers, sharedHold, longWorkers, writeEvery),
		"standby_servers": "grants_dialled_before_move: grants after the move of claims whose client dialled before it (one connection per claim; without the fence these are the old primary's grants on its established sessions, with it only claims whose dial raced the move and was forwarded to the standby); grants_dialled_after_move: the standby's",
		"standby_clock":   "both servers run on the same host clock here, so the docs' NTP requirement holds exactly; on two machines the standby's clock must not be behind the primary's",
	}
}

// sharedLoad is the shared name and the long holder of a standby variant:
// their grants and the two stores they write to.
type sharedLoad struct {
	fenced, unfenced *guardedstore.Store

	mu     sync.Mutex
	grants []guardedstore.Grant
	events []grantEvent
	fails  int
	// longLost are the moments the long holders learned they lost
	// their lock.
	longLost []time.Time
}

func newSharedLoad() *sharedLoad {
	return &sharedLoad{fenced: guardedstore.NewStore(true), unfenced: guardedstore.NewStore(false)}
}

// worker acquires key as client, retrying with the steady workers'
// backoff, holds it for hold (0: until it learns it lost it) while
// writing to both stores, and releases it, until ctx ends.
func (s *sharedLoad) worker(ctx context.Context, l bench.Locker, client, key string, hold, lease time.Duration) {
	delay := retryMin
	for ctx.Err() == nil {
		ev := grantEvent{attempt: time.Now()}
		actx, cancel := context.WithTimeout(ctx, lease)
		h, err := l.Acquire(actx, key)
		cancel()
		if ctx.Err() != nil {
			if h != nil {
				_ = h.Release(context.WithoutCancel(ctx))
			}
			return
		}
		if err != nil {
			s.mu.Lock()
			s.fails++
			s.mu.Unlock()
			if bench.Sleep(ctx, delay/2+mrand.N(delay/2+1)) != nil {
				return
			}
			delay = min(2*delay, retryMax)
			continue
		}
		delay = retryMin
		ev.at = time.Now()
		g := guardedstore.Grant{Client: client, Lock: key, At: check.Now()}
		if tok, ok := h.Token(); ok {
			g.Token = &tok
		}
		lost := s.hold(ctx, h, guardedstore.Write{Client: client, Lock: key, Token: g.Token}, hold)
		g.End = check.Now()
		lostAt := time.Now()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lease)
		_ = h.Release(rctx)
		cancel()
		s.mu.Lock()
		s.grants = append(s.grants, g)
		s.events = append(s.events, ev)
		if hold == 0 && lost {
			s.longLost = append(s.longLost, lostAt)
		}
		s.mu.Unlock()
	}
}

// hold writes w to both stores every writeEvery while h is held, for
// hold (0: until lost), and reports whether h was lost.
func (s *sharedLoad) hold(ctx context.Context, h bench.Held, w guardedstore.Write, hold time.Duration) bool {
	var end <-chan time.Time
	if hold > 0 {
		t := time.NewTimer(hold)
		defer t.Stop()
		end = t.C
	}
	tick := time.NewTicker(writeEvery)
	defer tick.Stop()
	for {
		s.fenced.Apply(w)
		s.unfenced.Apply(w)
		select {
		case <-h.Lost():
			return true
		case <-end:
			return false
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// runStandby runs one standby variant: with fence, primary-lost (the
// primary frozen, the watcher moving the address with the fence); without,
// no-fence.
func runStandby(ctx context.Context, env *bench.Env, cfg FailoverConfig, w watch, fence bool) (results.Raw, error) {
	if !env.Contender.Standby || len(env.Servers) != 2 {
		return results.Raw{Skipped: noStandby}, nil
	}
	primary, standby := env.Servers[0], env.Servers[1]
	if fence && primary.OpsAddr() == "" {
		return results.Raw{Skipped: noOps}, nil
	}
	mover, err := addrmove.Listen(primary.Addr())
	if err != nil {
		return results.Raw{}, err
	}
	defer mover.Close()
	l, err := env.Contender.Open(ctx, []string{mover.Addr()}, env.Lease)
	if err != nil {
		return results.Raw{}, fmt.Errorf("failover: opening %s: %w", env.Contender.Name, err)
	}
	defer l.Close()

	tl := &timeline{counts: map[string]int64{}}
	sh := newSharedLoad()
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var ft faultTimes
	ft.start = time.Now()
	for i := range cfg.Workers {
		wg.Go(func() { steadyWorker(lctx, l, DistinctKey(i), cfg.Hold, env.Lease, tl) })
	}
	shared := "standby-shared-" + randomHex()
	for i := range sharedWorkers {
		wg.Go(func() { sh.worker(lctx, l, fmt.Sprintf("shared-%d", i), shared, sharedHold, env.Lease) })
	}
	long := "standby-long-" + randomHex()
	for i := range longWorkers {
		wg.Go(func() { sh.worker(lctx, l, fmt.Sprintf("long-%d", i), long, 0, env.Lease) })
	}
	stopLoad := func() {
		stop()
		wg.Wait()
		ft.end = time.Now()
	}
	defer stopLoad()

	// The watcher runs from the start of the load, as keepalived does.
	var movedAt time.Time
	moved := make(chan struct{})
	wctx, wstop := context.WithCancel(ctx)
	defer wstop()
	if fence {
		go w.run(wctx, primary.OpsAddr(), func() {
			mover.Move(standby.Addr(), true)
			movedAt = time.Now()
			close(moved)
		})
	}

	if err := bench.Sleep(ctx, cfg.Before); err != nil {
		return results.Raw{}, err
	}
	select {
	case <-moved:
		return results.Raw{}, fmt.Errorf("failover: the watcher moved the address before the fault (%s failed under the load alone)", w)
	default:
	}
	ft.fault = time.Now()
	if fence {
		err := primary.Pause(ctx)
		ft.faultDone = time.Now()
		if errors.Is(err, bench.ErrNotSupported) {
			return results.Raw{Skipped: fmt.Sprintf(cannotFaultFmt, err)}, nil
		}
		if err != nil {
			return results.Raw{}, fmt.Errorf("failover: freezing the primary: %w", err)
		}
		defer func() { _ = primary.Unpause(context.WithoutCancel(ctx)) }()
		// Generous: every check of the fall timing out, twice over, and a
		// lease.
		limit := 2*time.Duration(2*w.fall+1)*w.interval + env.Lease
		select {
		case <-moved:
		case <-time.After(limit):
			return results.Raw{}, fmt.Errorf("failover: no move within %v of freezing the primary (%s)", limit, w)
		case <-ctx.Done():
			return results.Raw{}, ctx.Err()
		}
	} else {
		ft.faultDone = ft.fault
		mover.Move(standby.Addr(), false)
		movedAt = time.Now()
	}
	// The move is this pattern's "restart": the figures after it read as
	// the restart's do.
	ft.restart, ft.up = movedAt, movedAt
	if err := bench.Sleep(ctx, cfg.After); err != nil {
		return results.Raw{}, err
	}
	stopLoad()
	wstop()
	return standbyRaw(tl, sh, ft, env.Lease, fence), nil
}

// run checks /readyz at opsAddr every interval until ctx ends or fall
// checks in a row failed; then it calls move.
func (w watch) run(ctx context.Context, opsAddr string, move func()) {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer hc.CloseIdleConnections()
	t := time.NewTicker(w.interval)
	defer t.Stop()
	fails := 0
	for {
		if w.ready(ctx, hc, opsAddr) {
			fails = 0
		} else if fails++; fails >= w.fall && ctx.Err() == nil {
			move()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ready is one health check: GET /readyz answered 200 within the
// interval.
func (w watch) ready(ctx context.Context, hc *http.Client, opsAddr string) bool {
	ctx, cancel := context.WithTimeout(ctx, w.interval)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+opsAddr+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// standbyRaw reads the figures of a standby variant: the steady load's
// as for restart, with the move as the restart, plus D and what the shared
// load shows about safety.
func standbyRaw(tl *timeline, sh *sharedLoad, ft faultTimes, lease time.Duration, fence bool) results.Raw {
	raw := failoverRaw(tl, ft)
	// No restart: the standby was running all along. Without the fence
	// the move is the fault: there is no fault window to read.
	raw.Metrics = slices.DeleteFunc(raw.Metrics, func(m results.Metric) bool {
		switch m.Name {
		case "restart_ms":
			return true
		case "grant_rate_ratio", "acquire_p99_during_fault", "release_p99_during_fault":
			return !fence
		}
		return false
	})
	metric := func(name, unit string, v float64) {
		raw.Metrics = append(raw.Metrics, results.Metric{Name: name, Unit: unit, Value: v})
	}
	get := func(name string) (float64, bool) {
		for _, m := range raw.Metrics {
			if m.Name == name {
				return m.Value, true
			}
		}
		return 0, false
	}
	d := ft.restart.Sub(ft.fault)
	if fence {
		metric("d_ms", "ms", ms(d))
		if gap, ok := get("unavailable_ms"); ok && d > 0 {
			metric("gap_over_d", "ratio", gap/ms(d))
		}
		metric("holder_stop_limit_ms", "ms", ms(lease*4/5))
	}
	for _, at := range slices.SortedFunc(slices.Values(sh.longLost), time.Time.Compare) {
		if !at.Before(ft.fault) {
			metric("holder_stop_ms", "ms", ms(at.Sub(ft.fault)))
			break
		}
	}

	an := guardedstore.Analyze(sh.fenced.History(), sh.grants)
	unfenced := guardedstore.Analyze(sh.unfenced.History(), sh.grants)
	metric("double_grants", "count", float64(len(an.DoubleGrants)))
	metric("unsafe_writes_fenced", "count", float64(len(an.Unsafe)))
	metric("unsafe_writes_unfenced", "count", float64(len(unfenced.Unsafe)))
	metric("fenced_rejections", "count", float64(an.RejectedByFencing))
	var old, fresh int
	for _, g := range append(slices.Clone(tl.grants), sh.events...) {
		switch {
		case g.attempt.Before(ft.restart) && !g.at.Before(ft.restart):
			old++
		case !g.attempt.Before(ft.restart):
			fresh++
		}
	}
	metric("grants_dialled_before_move", "count", float64(old))
	metric("grants_dialled_after_move", "count", float64(fresh))
	raw.Counts["shared_grants"] = int64(len(sh.grants))
	raw.Counts["shared_failed_attempts"] = int64(sh.fails)
	raw.Counts["store_writes"] = int64(an.Writes)
	return raw
}
