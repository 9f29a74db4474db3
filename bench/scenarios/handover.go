package scenarios

// The handover scenario: how long a waiter waits after the holder lets go,
// in four ways a holder lets go — it releases (graceful), its process is
// killed (crash, SIGKILL), its process stalls (freeze, SIGSTOP: a GC
// pause, a VM freeze, a swapped-out host), or its host vanishes from the
// network (host-loss: its packets to the servers are silently dropped by
// its own fault-proxy links). A SIGKILL on the same host lets the kernel
// close the holder's sockets, so crash is a process crash, not a machine
// loss; host-loss is the machine loss.
//
// The holder runs in its own OS process (package holder); the waiter runs
// in the bench and is already queued or polling before t0, as its
// contender's coordinator counters show. t0 is taken in the bench the
// moment it asks the holder to release, sends SIGKILL or sends SIGSTOP; a
// trial's figure is the waiter's grant − t0 on the bench's monotonic
// clock.

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/aclements/go-moremath/stats"
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/faults/faultproxy"
	"github.com/monolock/monolock-bench/bench/faults/holder"

	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
)

// Handover modes, which are the variant names.
const (
	Graceful = "graceful"
	Crash    = "crash"
	Freeze   = "freeze"
	// HostLoss (the safety scenario's constant) is the fourth mode.
)

// Trial counts per mode and repetition, sized to the suite's time budget:
// a crash trial of a TTL lock costs a lease, a freeze or host-loss trial
// a lease (a lock without one the whole grant bound), so those get fewer.
const (
	DefaultTrials            = 4
	DefaultFreezeTrials      = 2
	DefaultQuickTrials       = 1
	DefaultQuickFreezeTrials = 1
	// lostHolderRepetitions caps the repetitions of crash, freeze and
	// host-loss in a full run: 2 × 4 = 8 crash trials and 2 × 2 = 4 of
	// each other per contender, each about a lease for a TTL lock (a third
	// crash repetition cost about a minute of a full run on a slow 2-core
	// machine).
	lostHolderRepetitions = 2
)

// Timing of a trial.
const (
	// phaseMin is the least upper bound of the random pause between "the
	// waiter is queued or polling" and t0; the bound is max(phaseMin,
	// lease/3). It spreads t0 over the retry delay of a polling waiter
	// (redsync's default jitter is 50–250ms) and over the holder's keep-alive
	// period (Redis watchdog ttl/3, monolock heartbeat lease/4), so that no
	// figure is biased to the start of a period: a real holder stops at a
	// random moment. Every contender gets the same rule.
	phaseMin = 250 * time.Millisecond
	// settle is the pause used instead of the servers' counters when the
	// deployment does not expose them (an external server without its ops
	// address): time enough for a loopback request to be queued or a first
	// attempt to be refused.
	settle = 200 * time.Millisecond
	// readyTimeout bounds starting the holder and queueing the waiter.
	readyTimeout = 15 * time.Second
	// pollEvery is how often the servers' counters are read while waiting
	// for the waiter to be queued.
	pollEvery = 2 * time.Millisecond
	// minGrantBound is the least grant bound: etcd grants no sooner than
	// its minimum TTL (~1.5s) and expiry sweep, whatever the lease.
	minGrantBound = 3 * time.Second
	// assumedLease is the lease the ETA assumes (the runner's default).
	assumedLease = 2 * time.Second
)

// errSetup is wrapped when a trial could not be set up — the holder
// process could not be started or could not acquire its fresh, uncontended
// key, or the servers' counters could not be read: the step fails rather
// than counting a failed handover.
var errSetup = errors.New("handover: setting up the trial")

// HandoverConfig configures the handover scenario.
type HandoverConfig struct {
	// Holder starts the holder child process: the bench binary with its
	// hidden holder subcommand. Required.
	Holder holder.Command
	// Trials is the number of trials of the graceful and crash modes,
	// FreezeTrials of the freeze and host-loss modes (each costs a lease),
	// per repetition. Zero means DefaultTrials and DefaultFreezeTrials, or
	// the Quick defaults in a quick run.
	Trials, FreezeTrials int
}

func (c HandoverConfig) trials(quick bool, mode string) int {
	n, def, qdef := c.Trials, DefaultTrials, DefaultQuickTrials
	if mode == Freeze || mode == HostLoss {
		n, def, qdef = c.FreezeTrials, DefaultFreezeTrials, DefaultQuickFreezeTrials
	}
	switch {
	case n > 0:
		return n
	case quick:
		return qdef
	default:
		return def
	}
}

// Scenario returns the handover scenario with variants graceful, crash,
// freeze and host-loss and metrics p50, p95, max (ms) and failed (count). Floors do not
// take part; waiting-strategy variants do.
func (cfg HandoverConfig) Scenario() bench.Scenario {
	modes := []string{Graceful, Crash, Freeze, HostLoss}
	faults := map[string]string{Graceful: results.FaultRelease, Crash: results.FaultKill, Freeze: results.FaultFreeze, HostLoss: results.FaultHostLoss}
	hm := results.HandoverMetrics
	return bench.Scenario{
		Name:    "handover",
		Title:   "Handover",
		Metrics: hm.List(),
		Decides: []results.DecisionFigure{
			{ID: "frozen-freed", Text: "frees a frozen holder's lock within one lease (SIGSTOP; slowest trial ≤ 1.1 × lease)", Variant: Freeze, Metric: hm.Max.Name, Counts: "freed after", Op: results.AtMost, Than: results.ClaimBound{Parameter: "lease", Factor: 1.1}, Fail: trialsFailed},
			{ID: "host-loss-freed", Text: "frees the lock of a holder whose host vanished within one lease (slowest trial ≤ 1.1 × lease)", Variant: HostLoss, Metric: hm.Max.Name, Counts: "freed after", Op: results.AtMost, Than: results.ClaimBound{Parameter: "lease", Factor: 1.1}, Fail: trialsFailed},
			{ID: "handover-graceful", Text: "handover after a release, p50", Variant: Graceful, Metric: hm.P50.Name, Fail: trialsFailed},
			{ID: "handover-crash", Text: "handover after a crash (SIGKILL), p50", Variant: Crash, Metric: hm.P50.Name, Fail: trialsFailed},
			{ID: "handover-freeze", Text: "handover after a freeze (SIGSTOP), p50", Variant: Freeze, Metric: hm.P50.Name, Fail: trialsFailed},
		},
		Settings: func(quick bool) results.Settings {
			return results.Settings{
				"trials_graceful":  strconv.Itoa(cfg.trials(quick, Graceful)),
				"trials_crash":     strconv.Itoa(cfg.trials(quick, Crash)),
				"trials_freeze":    strconv.Itoa(cfg.trials(quick, Freeze)),
				"trials_host-loss": strconv.Itoa(cfg.trials(quick, HostLoss)),
				"repetitions":      "as the run's; crash, freeze and host-loss at most " + strconv.Itoa(lostHolderRepetitions) + " (each trial waits a lease, or the whole grant bound for a lock without one); trials_* are per repetition, so a figure rests on trials × repetitions trials",
				"host-loss":        "the holder reaches the servers only through its own links of an embedded fault proxy (toxiproxy), which drop its packets silently (no FIN, no reset) at t0: a lost machine; under an emulated network profile it runs instead on an emulated host of its own, whose link drops every packet both ways at t0, SYNs included; a SIGKILL (crash) on the same host lets the kernel close the sockets, so crash is a process crash",
				"holder":           "separate OS process (the bench binary's holder subcommand), same contender code; one process per trial, one fresh key per trial",
				"waiter":           "in the bench; queued or polling before t0: the contender's waiting counter (its counters setting) rose; without server counters a " + settle.String() + " settle pause",
				"phase":            "random pause uniform in [0, max(" + phaseMin.String() + ", lease/3)) between waiter ready and t0, for every contender: spreads t0 over the waiter's retry delay and the holder's watchdog/heartbeat period",
				"t0":               "graceful: before writing the release request to the holder's stdin; crash: before SIGKILL; freeze: before SIGSTOP (a holder in a client pod, kubernetes backend: when the pod's agent sent the signal, on the node's wall clock taken onto the bench's monotonic one); host-loss: before blackholing the holder's proxy links (a client pod: before its network cut, whose exec through the API is included)",
				"figure":           "waiter's grant - t0, bench monotonic clock",
				"percentiles":      "nearest rank over the successful trials",
				"failed":           "no grant within 2 leases + 1s (at least " + minGrantBound.String() + "), holder failed to release (graceful), or waiter granted or failed before t0; a holder that cannot start or acquire, or unreadable server counters, fail the step instead",
				"frozen_holder":    "resumed (SIGCONT) after the trial, then asked to exit and reaped",
			}
		},
		Variants: func(quick bool) []bench.Variant {
			var vs []bench.Variant
			for _, mode := range modes {
				n := cfg.trials(quick, mode)
				// Per trial, averaged over the contender table (measured in
				// quick runs): graceful ~0.4s; crash ~2s for half the
				// contenders (a TTL runs out), ~0.4s for the others;
				// freeze and host-loss a lease, the grant bound for the two
				// without a lease.
				per := 400 * time.Millisecond
				switch mode {
				case Crash:
					per += assumedLease / 2
				case Freeze, HostLoss:
					per += assumedLease + (grantBound(assumedLease)-assumedLease)/5
				}
				reps := lostHolderRepetitions
				if mode == Graceful {
					reps = 0 // as the run's
				}
				vs = append(vs, bench.Variant{
					Name:           mode,
					Contended:      true,
					Params:         results.VariantParams{Workers: 2, Keys: 1, Fault: faults[mode], GrantBound: &grantBoundRule},
					Estimate:       time.Duration(n) * per,
					MaxRepetitions: reps,
					Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
						return runHandover(ctx, env, cfg.Holder, mode, n)
					},
				})
			}
			return vs
		},
	}
}

// runHandover measures trials handovers of one mode for env's contender.
func runHandover(ctx context.Context, env *bench.Env, cmd holder.Command, mode string, trials int) (results.Raw, error) {
	if cmd.Path == "" {
		return results.Raw{}, errors.New("handover: no holder command configured")
	}
	waiter, err := env.Open(ctx)
	if err != nil {
		return results.Raw{}, err
	}
	defer waiter.Close()
	probe, err := openCoordinator(env)
	if err != nil {
		return results.Raw{}, err
	}
	if probe != nil {
		defer probe.Close()
	} // else a settle pause instead
	// Warm-up: one uncontended cycle, so the first trial does not pay for
	// the waiter's first connections.
	if err := load.Cycle(ctx, waiter, "handover-warmup-"+randomHex(), 0); err != nil {
		return results.Raw{}, fmt.Errorf("handover: warm-up: %w", err)
	}

	t := &handoverTrial{env: env, cmd: cmd, mode: mode, waiter: waiter, probe: probe}
	switch {
	case env.ClientHost != nil && (mode == HostLoss || env.RemoteClients && mode != Graceful):
		// On an emulated network the holder runs on a host of its own,
		// whose link drops every packet when the host is lost; where
		// client hosts are machines of their own (pods), it runs there
		// for every fault, so the deployment kills, freezes or cuts it.
		if t.host, err = env.ClientHost(ctx, "holder"); err != nil {
			return results.Raw{}, err
		}
		defer t.host.Close()
		t.cmd = t.cmd.On(t.host)
	case mode == HostLoss:
		proxy := faultproxy.New()
		defer proxy.Close()
		if t.view, err = proxy.View("holder", env.Addrs); err != nil {
			return results.Raw{}, err
		}
	}
	var values []float64
	var errs []string
	begin := time.Now()
	for range trials {
		d, err := t.run(ctx)
		if ctx.Err() != nil {
			return results.Raw{}, ctx.Err()
		}
		if errors.Is(err, errSetup) {
			// Not a failed handover: the harness or the servers are broken.
			return results.Raw{}, err
		}
		if err != nil {
			errs = load.NoteError(errs, err.Error())
			continue
		}
		values = append(values, ms(d))
	}
	failed := trials - len(values)
	raw := results.Raw{
		Seconds: time.Since(begin).Seconds(),
		Counts:  map[string]int64{"trials": int64(trials), "failed": int64(failed)},
		Series:  []results.Series{{Name: "handover", Unit: "ms", Values: values}},
		Errors:  errs,
	}
	hm := results.HandoverMetrics
	if len(values) > 0 {
		sorted := slices.Sorted(slices.Values(values))
		raw.Metrics = append(raw.Metrics,
			hm.P50.Of(stats.Sample{Xs: sorted, Sorted: true}.Quantile(0.5)),
			hm.P95.Of(stats.Sample{Xs: sorted, Sorted: true}.Quantile(0.95)),
			hm.Max.Of(sorted[len(sorted)-1]),
		)
	}
	raw.Metrics = append(raw.Metrics, hm.Failed.Of(float64(failed)))
	return raw, nil
}

// handoverTrial is the state shared by the trials of one repetition.
type handoverTrial struct {
	env    *bench.Env
	cmd    holder.Command
	mode   string
	waiter bench.Locker
	probe  bench.Coordinator // nil: settle pause
	view   *faultproxy.View  // the holder's links in host-loss mode, else nil
	host   bench.ClientHost  // the holder's host in host-loss mode on an emulated network, or for every fault on remote client hosts, else nil
}

type grant struct {
	held bench.Held
	at   time.Time
	err  error
}

// run performs one trial and returns the handover time.
func (t *handoverTrial) run(ctx context.Context) (time.Duration, error) {
	key := "handover-" + t.mode + "-" + randomHex()
	rctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	addrs := t.env.Addrs
	if t.view != nil {
		if err := t.view.ReachAll(); err != nil {
			return 0, fmt.Errorf("%w: %w", errSetup, err)
		}
		addrs = t.view.Addrs()
	}
	if t.host != nil {
		if err := t.host.Drop(false, false); err != nil {
			return 0, fmt.Errorf("%w: %w", errSetup, err)
		}
	}
	h, err := holder.Start(rctx, t.cmd, holder.Spec{
		Contender: t.env.Contender.Name, Addrs: addrs, Lease: t.env.Lease, Key: key,
	})
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errSetup, err)
	}
	defer h.Close() // resumes a frozen holder, asks it to exit, reaps it
	if t.view != nil {
		// Before Close: the restore ends the holder's dead connections,
		// so its release fails at once instead of waiting.
		defer func() { _ = t.view.ReachAll() }()
	}
	if t.host != nil {
		// Before Close, as the proxy's restore above.
		defer func() { _ = t.host.Drop(false, false) }()
	}

	var base bench.Counts
	if t.probe != nil {
		if base, err = t.probe.Counts(rctx); err != nil {
			return 0, fmt.Errorf("%w: %w", errSetup, err)
		}
	}

	wctx, wcancel := context.WithCancel(ctx)
	granted := make(chan grant, 1)
	go func() {
		held, err := t.waiter.Acquire(wctx, key)
		granted <- grant{held, time.Now(), err}
	}()
	var g *grant
	defer func() {
		// Never leave the waiter goroutine or its grant behind.
		wcancel()
		if g == nil {
			r := <-granted
			g = &r
		}
		if g.held != nil {
			_ = g.held.Release(context.WithoutCancel(ctx))
		}
	}()

	early := func(r grant) error {
		g = &r
		if r.err != nil {
			return fmt.Errorf("handover: waiter failed before t0: %w", r.err)
		}
		return errors.New("handover: waiter granted before t0 (the holder lost the lock)")
	}
	if r, err := t.waitReady(rctx, base, granted); r != nil {
		return 0, early(*r)
	} else if err != nil {
		return 0, err
	}
	select {
	case r := <-granted:
		return 0, early(r)
	case <-time.After(mrand.N(phaseBound(t.env.Lease))):
	case <-ctx.Done():
		return 0, ctx.Err()
	}

	t0 := time.Now()
	switch t.mode {
	case Graceful:
		err = h.Release()
	case Crash:
		err = h.Kill()
	case Freeze:
		err = h.Freeze()
	case HostLoss:
		if t.host != nil {
			err = t.host.Drop(true, true)
			break
		}
		for _, l := range t.view.Links {
			if err = l.Blackhole(); err != nil {
				break
			}
		}
	}
	if err != nil {
		return 0, err
	}
	if at := h.SignalledAt(); !at.IsZero() && (t.mode == Crash || t.mode == Freeze) {
		// A holder in a pod: its signal left through the API, and t0 is
		// when the pod's agent sent it.
		t0 = at
	}
	bound := grantBound(t.env.Lease)
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	select {
	case r := <-granted:
		g = &r
	case <-deadline.C:
		return 0, fmt.Errorf("handover: waiter not granted within %v of t0", bound)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if g.err != nil {
		return 0, fmt.Errorf("handover: waiter: %w", g.err)
	}
	d := g.at.Sub(t0)
	if t.mode == Graceful {
		if err := h.Released(rctx); err != nil {
			return 0, fmt.Errorf("handover: holder's release: %w", err)
		}
	}
	return d, nil
}

// waitReady returns once the waiter is queued or polling (the
// coordinator's Waiting counter rose above base), or after the settle
// pause without a probe. If the waiter's Acquire returned first, it
// returns that result.
func (t *handoverTrial) waitReady(ctx context.Context, base bench.Counts, granted <-chan grant) (*grant, error) {
	if t.probe == nil {
		select {
		case r := <-granted:
			return &r, nil
		case <-time.After(settle):
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case r := <-granted:
			return &r, nil
		case <-tick.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("handover: waiter not seen queued or polling: %w", ctx.Err())
		}
		c, err := t.probe.Counts(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errSetup, err)
		}
		if c.Waiting > base.Waiting {
			return nil, nil
		}
	}
}

// grantBound is how long a waiter may wait for its grant after t0 (and
// the safety scenario's B, and A to learn): two leases and a second, at
// least minGrantBound. A lease contender grants after about one lease
// (measured at most ~2.2s at a 2s lease); a lock without a lease never
// does under freeze or host-loss (postgres: the frozen or cut-off holder's
// session stays open, its kernel or the proxy still answering keepalives)
// and pays the whole bound per trial.
func grantBound(lease time.Duration) time.Duration {
	return grantBoundRule.At(lease)
}

// grantBoundRule is grantBound as data, recorded with the variants.
var grantBoundRule = results.Bound{Leases: 2, Plus: time.Second.String(), Min: minGrantBound.String()}

// phaseBound is the upper bound of the random pause before t0.
func phaseBound(lease time.Duration) time.Duration { return max(phaseMin, lease/3) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// trialsFailed fails a handover figure whose trials include one where the
// waiter never got the lock within its bound.
var trialsFailed = []results.ClaimGuard{{Metric: results.HandoverMetrics.Failed.Name, Label: "trials without a grant within the bound"}}
