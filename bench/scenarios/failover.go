package scenarios

// The failover scenario: the coordinator is lost under a steady load.
//
// restart, graceful-restart and minority-down run a closed loop of workers
// on distinct keys for the whole variant and record every grant and every
// failed attempt on the bench's monotonic clock. After a stretch of normal
// load the coordinator's servers are killed (SIGKILL) or stopped (the
// contender's graceful stop signal): a single-server contender's one
// server, a cluster's majority (floor(n/2)+1 of n), all together — and
// restarted on the same address after a pause; minority-down kills a
// cluster's largest minority ((n-1)/2) and keeps it down. The figures are
// read from the grant timeline.
//
// restart-unsafe and restart-delayed (failover_split.go) check the
// delayed-restart rule of Redlock on any cluster of three or more servers.
// primary-lost, primary-lost-fast and no-fence (failover_standby.go) are
// the failover of a standby pair, its address moved by the bench; the
// other variants skip a standby pair and the standby variants skip every
// other contender, each with its reason. The steady load's workers and
// figures are in failover_timeline.go.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
	"golang.org/x/sys/unix"
)

// Failover variants.
const (
	FailoverRestart  = "restart"
	FailoverGraceful = "graceful-restart"
	FailoverMinority = "minority-down"
	FailoverUnsafe   = "restart-unsafe"
	FailoverDelayed  = "restart-delayed"
)

// Defaults of FailoverConfig.
const (
	DefaultFailoverWorkers = 8
	DefaultFailoverHold    = 10 * time.Millisecond
	// DefaultFailoverPause is P, the time the coordinator stays down
	// before its restart.
	DefaultFailoverPause = time.Second
	// Load before the fault and after the restart.
	DefaultFailoverBefore      = time.Second
	DefaultFailoverAfter       = 2 * time.Second
	DefaultFailoverQuickBefore = 300 * time.Millisecond
	DefaultFailoverQuickAfter  = 700 * time.Millisecond
	// Trials of restart-unsafe and restart-delayed per repetition.
	DefaultSplitTrials      = 2
	DefaultSplitQuickTrials = 1
	// failoverRepetitions caps the repetitions of every failover variant
	// in a full run: each restarts servers.
	failoverRepetitions = 2
	// restartCost is what a steady-load variant costs beyond its load
	// windows (the stop or kill, the restart until the servers serve, the
	// workers' drain), averaged over the contender table in quick runs
	// through the containers backend, for the ETA.
	restartCost = 2 * time.Second
)

// The workers' retries, DoRetry-style (the retry helper of this
// project's client): exponential backoff from retryMin to retryMax, each
// delay drawn uniformly from [d/2, d]. The same loop retries every
// contender, so none gets a private advantage.
const (
	retryMin = 100 * time.Millisecond
	retryMax = 5 * time.Second
)

// bucket is the width of the grants-over-time series.
const bucket = 100 * time.Millisecond

// FailoverConfig configures the failover scenario. Zero fields take the
// defaults.
type FailoverConfig struct {
	// Workers is the number of workers of the steady load, each on its own
	// key; Hold how long each grant is held. Defaults
	// DefaultFailoverWorkers and DefaultFailoverHold.
	Workers int
	Hold    time.Duration
	// Pause is P, how long the killed servers stay down before their
	// restart; default DefaultFailoverPause (quick: half), a negative value restarts at
	// once.
	Pause time.Duration
	// Before is the load before the fault; After the load after the
	// restart (minority-down: the fault lasts Pause + After). Defaults
	// DefaultFailoverBefore and DefaultFailoverAfter, or the Quick ones.
	Before, After time.Duration
	// Trials is the number of trials of restart-unsafe and
	// restart-delayed per repetition; default DefaultSplitTrials, or
	// DefaultSplitQuickTrials in a quick run.
	Trials int
}

func (c FailoverConfig) withDefaults(quick bool) FailoverConfig {
	if c.Workers <= 0 {
		c.Workers = DefaultFailoverWorkers
	}
	if c.Hold <= 0 {
		c.Hold = DefaultFailoverHold
	}
	switch {
	case c.Pause == 0 && quick:
		c.Pause = DefaultFailoverPause / 2
	case c.Pause == 0:
		c.Pause = DefaultFailoverPause
	case c.Pause < 0:
		c.Pause = 0
	}
	before, after, trials := DefaultFailoverBefore, DefaultFailoverAfter, DefaultSplitTrials
	if quick {
		before, after, trials = DefaultFailoverQuickBefore, DefaultFailoverQuickAfter, DefaultSplitQuickTrials
	}
	if c.Before <= 0 {
		c.Before = before
	}
	if c.After <= 0 {
		c.After = after
	}
	if c.Trials <= 0 {
		c.Trials = trials
	}
	return c
}

// Scenario returns the failover scenario: variants restart,
// graceful-restart, minority-down, restart-unsafe and restart-delayed
// with the metrics of the spec's failover row, and the standby pair's
// primary-lost, primary-lost-fast and no-fence. Floors do not take part.
func (cfg FailoverConfig) Scenario() bench.Scenario {
	fo := results.FailoverMetrics
	return bench.Scenario{
		Name:    "failover",
		Title:   "Failover of the coordinator",
		Metrics: fo.List(),
		// The graceful-restart variant stops a contender's servers with
		// their spec's signal: recorded with the contender.
		ContenderSettings: func(c bench.Contender) results.Settings {
			return results.Settings{"stop_signal": unix.SignalName(c.Server.GracefulSignal()) + " (a graceful stop: failover " + FailoverGraceful + ")"}
		},
		// The standby pair answers "the coordinator fails" with its own
		// variants: the primary's host lost and the standby taking over.
		// A standby starts empty, so the risk of a server granting
		// without the previous grants is its own too, measured with the
		// fence (no-fence is the docs' caution, not the deployment).
		Decides: []results.DecisionFigure{
			{ID: "granting-server-down", Text: "keeps granting while a server is down (a minority down, or the primary lost with a standby: no stretch without a grant longer than one lease; or grants while the killed servers were down)", Variant: FailoverMinority, Metric: fo.UnavailableMs.Name, Counts: "no grant for", Op: results.AtMost, Than: results.ClaimBound{Parameter: "lease"}, Combine: results.CombineAny},
			{ID: "granting-server-down", Text: "keeps granting while a server is down", Variant: FailoverRestart, Metric: fo.GrantsWhileDown.Name, Counts: "grants while down", Op: results.AtLeast, Than: results.ClaimBound{Value: 1}, Combine: results.CombineAny},
			{ID: "granting-server-down", Text: "keeps granting while a server is down (the primary lost, a standby takes over within one lease: /readyz every 100 ms × 2)", Variant: FailoverPrimaryLostFast, Metric: fo.UnavailableMs.Name, Counts: "no grant for", Op: results.AtMost, Than: results.ClaimBound{Parameter: "lease"}, Combine: results.CombineAny},
			{ID: "granting-server-down", Text: "keeps granting while a server is down (the primary lost, a standby takes over within one lease: the docs' /readyz every 1 s × 2)", Variant: FailoverPrimaryLost, Metric: fo.UnavailableMs.Name, Counts: "no grant for", Op: results.AtMost, Than: results.ClaimBound{Parameter: "lease"}, Combine: results.CombineAny},
			{ID: "restart-no-double-grant", Text: "no double grant when a server takes over without the previous grants (a cluster: a shared server restarted without its data; a standby pair: the empty standby taking over, with the fence)", Variant: FailoverUnsafe, Metric: fo.DoubleGrants.Name, Counts: "double grants", Op: results.AtMost},
			{ID: "restart-no-double-grant", Text: "no double grant when the empty standby takes over (the docs' /readyz every 1 s × 2, with the fence)", Variant: FailoverPrimaryLost, Metric: fo.DoubleGrants.Name, Counts: "double grants", Op: results.AtMost},
			{ID: "restart-no-double-grant", Text: "no double grant when the empty standby takes over (/readyz every 100 ms × 2, with the fence)", Variant: FailoverPrimaryLostFast, Metric: fo.DoubleGrants.Name, Counts: "double grants", Op: results.AtMost},
			{ID: "recovery", Text: "grant rate after the restart returned / before (a standby pair: after the move)", Variant: FailoverRestart, Metric: fo.GrantRateAfterRatio.Name},
			{ID: "recovery", Text: "grant rate after the move / before", Variant: FailoverPrimaryLostFast, Metric: fo.GrantRateAfterRatio.Name},
			{ID: "failover-detection", Text: "D, the standby's detection and switch (/readyz every 100 ms × 2)", Variant: FailoverPrimaryLostFast, Metric: fo.DetectionMs.Name},
			{ID: "failover-detection", Text: "D, the standby's detection and switch (the docs' /readyz every 1 s × 2)", Variant: FailoverPrimaryLost, Metric: fo.DetectionMs.Name},
		},
		Settings: func(quick bool) results.Settings {
			c := cfg.withDefaults(quick)
			set := results.Settings{
				"workers":         strconv.Itoa(c.Workers) + ", distinct keys, one Locker shared by the workers",
				"hold":            c.Hold.String(),
				"before":          c.Before.String() + " of load before the fault",
				"pause":           c.Pause.String() + " (P: the killed servers stay down this long before the restart)",
				"after":           c.After.String() + " of load after the restart returned (minority-down: the fault lasts pause + after)",
				"targets":         "restart, graceful-restart: a single server, or a majority floor(n/2)+1 of a cluster's n; minority-down: the largest minority (n-1)/2, cluster contenders only",
				"faults":          "restart, minority-down: SIGKILL; graceful-restart: the contender's graceful stop signal (its stop_signal setting, recorded with each contender), killed after the backend's grace period; the targets are killed or stopped together and restarted together on the same address through the backend, which waits until the servers serve",
				"retries":         fmt.Sprintf("every contender in the same loop, DoRetry-style: backoff %v to %v doubling, each delay uniform in [d/2, d]; a grant resets it", retryMin, retryMax),
				"attempt_timeout": "one lease per Acquire attempt and per Release (a dead server must not hold a worker longer); contenders' own client timeouts apply inside",
				"in_fault":        "acquire_p99_during_fault: acquisitions (first attempt to grant, retries included) in flight during the fault window (kill to restart begun; minority-down: to the end); release_p99_during_fault likewise for releases",
				"series":          "grants and failed attempts per " + bucket.String() + " from the start of the load; markers: fault, restart begun, restart returned (ms)",
				"split_trials":    strconv.Itoa(c.Trials) + " per repetition (restart-unsafe, restart-delayed)",
				"repetitions":     "as the run's, at most " + strconv.Itoa(failoverRepetitions) + " (every variant restarts servers)",
				"split":           "cluster contenders with 3+ servers: client A reaches a majority [1..q], client B the majority [n-q+1..n] (q = floor(n/2)+1), both through the embedded fault proxy, the other paths refused (the link is closed); A acquires, A's shared servers are SIGKILLed at once and restarted at once (unsafe) or after one lease (delayed), then B tries for 2 leases; A writes to an unfenced guarded store every 10ms while it believes it holds the lock, B once; double grants and unsafe writes by guardedstore.Analyze; the servers' persistence is the contender's (see its settings)",
			}
			maps.Copy(set, standbySettings())
			return set
		},
		Variants: func(quick bool) []bench.Variant {
			c := cfg.withDefaults(quick)
			// Per contender, averaged over the contender table: minority-down
			// and the split variants apply to the two cluster contenders
			// (measured ~2s per minority-down, ~1.5–7s per split trial, the
			// delayed one a lease more), the others skip at once.
			steady := c.Before + c.Pause + c.After + restartCost
			minority := (c.Before + c.Pause + c.After) / 4
			split := time.Duration(c.Trials) * assumedLease / 2
			return append([]bench.Variant{
				{Name: FailoverRestart, Params: results.VariantParams{Workers: c.Workers, Fault: results.FaultServerKill}, MaxRepetitions: failoverRepetitions, Skip: skipStandby, Estimate: steady, Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runFailover(ctx, env, c, FailoverRestart)
				}},
				{Name: FailoverGraceful, Params: results.VariantParams{Workers: c.Workers, Fault: results.FaultServerStop}, MaxRepetitions: failoverRepetitions, Skip: skipStandby, Estimate: steady, Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runFailover(ctx, env, c, FailoverGraceful)
				}},
				{Name: FailoverMinority, Params: results.VariantParams{Workers: c.Workers, Fault: results.FaultMinorityDown}, MaxRepetitions: failoverRepetitions, Skip: skipFewServers(2, noMinority, noMinority), Estimate: minority, Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runFailover(ctx, env, c, FailoverMinority)
				}},
				{Name: FailoverUnsafe, Params: results.VariantParams{Workers: 2, Keys: 1, Fault: results.FaultSplitUnsafe}, MaxRepetitions: failoverRepetitions, Skip: skipFewServers(3, noSplit, tooFewToSplit), Estimate: split, Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runSplit(ctx, env, c, false)
				}},
				{Name: FailoverDelayed, Params: results.VariantParams{Workers: 2, Keys: 1, Fault: results.FaultSplitDelayed}, MaxRepetitions: failoverRepetitions, Skip: skipFewServers(3, noSplit, tooFewToSplit), Estimate: split + time.Duration(c.Trials)*assumedLease/4, Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runSplit(ctx, env, c, true)
				}},
			}, standbyVariants(c)...)
		},
	}
}

// Skip reasons.
const (
	noMinority     = "single server: no minority to lose"
	noSplit        = "single server: no two majorities to split"
	tooFewToSplit  = "fewer than 3 servers: no two majorities sharing a minority"
	cannotFaultFmt = "the backend cannot kill or restart servers: %v"
)

// targets returns the indexes of the servers a variant kills: the one
// server, or the first floor(n/2)+1 of a cluster; the first (n-1)/2 for
// minority-down.
func targets(n int, variant string) []int {
	k := n/2 + 1
	if n == 1 {
		k = 1
	}
	if variant == FailoverMinority {
		k = (n - 1) / 2
	}
	out := make([]int, k)
	for i := range out {
		out[i] = i
	}
	return out
}

// faultTimes are the moments of one fault on the bench's monotonic clock.
type faultTimes struct {
	start     time.Time // the load began
	fault     time.Time // just before the first kill or stop
	faultDone time.Time // every target is dead
	restart   time.Time // just before the restarts; zero for minority-down
	up        time.Time // every restart returned: the servers serve
	end       time.Time // the load stopped
}

// skipFewServers skips the standby pair and a contender with fewer than
// least servers before the run (so the ETA leaves it out), with one's
// reason for a single server and few's for more; the variant's run checks
// the servers it gets again.
func skipFewServers(least int, one, few string) func(c bench.Contender) string {
	return func(c bench.Contender) string {
		if c.Standby {
			return standbyPair
		}
		if c.Server == nil { // no spec: the run counts the servers it gets
			return ""
		}
		switch n := c.Server.Count(); {
		case n >= least:
			return ""
		case n == 1:
			return one
		default:
			return few
		}
	}
}

// runFailover runs one steady-load variant for env's contender.
func runFailover(ctx context.Context, env *bench.Env, cfg FailoverConfig, variant string) (results.Raw, error) {
	n := len(env.Servers)
	if variant == FailoverMinority && n < 2 {
		return results.Raw{Skipped: noMinority}, nil
	}
	var servers []bench.Server
	for _, i := range targets(n, variant) {
		servers = append(servers, env.Servers[i])
	}
	l, err := env.Open(ctx)
	if err != nil {
		return results.Raw{}, err
	}
	defer l.Close()

	tl := &timeline{counts: map[string]int64{}}
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var ft faultTimes
	ft.start = time.Now()
	for i := range cfg.Workers {
		wg.Go(func() { steadyWorker(lctx, l, DistinctKey(i), cfg.Hold, env.Lease, tl) })
	}
	stopLoad := func() {
		stop()
		wg.Wait()
		ft.end = time.Now()
	}
	defer stopLoad()

	if err := bench.Sleep(ctx, cfg.Before); err != nil {
		return results.Raw{}, err
	}
	down, err := fault(ctx, servers, variant, &ft)
	// Whatever happens, the next variant finds every server serving. A
	// closure: down is cleared once the restart is done, and restarting
	// running servers again would cost a stop and a restart.
	defer func() { _ = restartAll(context.WithoutCancel(ctx), down) }()
	if errors.Is(err, bench.ErrNotSupported) {
		return results.Raw{Skipped: fmt.Sprintf(cannotFaultFmt, err)}, nil
	}
	if err != nil {
		return results.Raw{}, err
	}
	if variant == FailoverMinority {
		if err := bench.Sleep(ctx, cfg.Pause+cfg.After); err != nil {
			return results.Raw{}, err
		}
		stopLoad()
	} else {
		if err := bench.Sleep(ctx, cfg.Pause); err != nil {
			return results.Raw{}, err
		}
		ft.restart = time.Now()
		err := restartAll(ctx, down)
		down = nil
		ft.up = time.Now()
		if err != nil {
			return results.Raw{}, fmt.Errorf("failover: restart: %w", err)
		}
		if err := bench.Sleep(ctx, cfg.After); err != nil {
			return results.Raw{}, err
		}
		stopLoad()
	}
	return failoverRaw(tl, ft), nil
}

// fault kills (restart, minority-down) or stops (graceful-restart) every
// server together, as restartAll restarts them, recording the moments in
// ft, and returns those it brought down.
func fault(ctx context.Context, servers []bench.Server, variant string, ft *faultTimes) ([]bench.Server, error) {
	ft.fault = time.Now()
	errs := onEach(servers, func(s bench.Server) error {
		if variant == FailoverGraceful {
			return s.Stop(ctx)
		}
		return s.Kill(ctx)
	})
	ft.faultDone = time.Now()
	var down []bench.Server
	for i, s := range servers {
		if errs[i] == nil {
			down = append(down, s)
		}
	}
	return down, errors.Join(errs...)
}

// restartAll restarts servers together, as an operator brings a cluster
// back, and waits until each serves.
func restartAll(ctx context.Context, servers []bench.Server) error {
	return errors.Join(onEach(servers, func(s bench.Server) error { return s.Restart(ctx) })...)
}

// onEach runs f on every server at once and returns its error per server,
// each naming the server.
func onEach(servers []bench.Server, f func(bench.Server) error) []error {
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			if err := f(s); err != nil {
				errs[i] = fmt.Errorf("%s: %w", s.Name(), err)
			}
		})
	}
	wg.Wait()
	return errs
}
