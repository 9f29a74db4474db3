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

import (
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/aclements/go-moremath/stats"
	"github.com/monolock/monolock-bench/bench"

	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/output/results"
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
// with the metrics of the spec's failover row. Floors do not take part.
func (cfg FailoverConfig) Scenario() bench.Scenario {
	lower, higher := results.BetterLower, results.BetterHigher
	return bench.Scenario{
		Name:  "failover",
		Title: "Failover of the coordinator",
		Metrics: []results.MetricSpec{
			{Name: "unavailable_ms", Unit: "ms", Better: lower, Label: "longest stretch without a grant", Kind: results.KindLatency, Key: true},
			{Name: "zero_grant_ms", Unit: "ms", Better: lower, Label: "time in empty 100-ms buckets after the fault", Kind: results.KindLatency},
			{Name: "recovery_ms", Unit: "ms", Better: lower, Label: "recovery after the restart began", Kind: results.KindLatency, Key: true},
			{Name: "failed_attempts", Unit: "count", Better: lower, Label: "failed attempts", Kind: results.KindCount, Key: true},
			{Name: "lost_holders", Unit: "count", Better: lower, Label: "holders that lost their lock", Kind: results.KindCount},
			{Name: "double_grants", Unit: "count", Better: lower, Label: "double grants", Kind: results.KindCount, Key: true},
			{Name: "unsafe_writes", Unit: "count", Better: lower, Label: "stale writes accepted", Kind: results.KindCount},
			{Name: "acquire_p99_during_fault", Unit: "us", Better: lower, Label: "acquire p99 during the fault", Kind: results.KindLatency},
			{Name: "release_p99_during_fault", Unit: "ms", Better: lower, Label: "release p99 during the fault", Kind: results.KindLatency},
			{Name: "grant_rate_ratio", Unit: "ratio", Better: higher, Label: "grant rate after the fault / before", Kind: results.KindRatio},
			{Name: "tokens_monotonic", Unit: "bool", Better: higher, Label: "tokens after the fault exceed all before", Kind: results.KindVerdict, Key: true},
			{Name: "grants_while_down", Unit: "count", Label: "grants while the servers were down", Kind: results.KindCount},
			{Name: "lost_after_ms", Unit: "ms", Label: "time from the fault until holders learned of the loss", Kind: results.KindLatency},
			{Name: "restart_ms", Unit: "ms", Label: "time the restart took", Kind: results.KindParameter},
			{Name: "token_gap", Unit: "count", Label: "gap between the last token before and the first after", Kind: results.KindCount},
			{Name: "b_granted", Unit: "count", Label: "trials where the second client was granted", Kind: results.KindCount},
		},
		// The graceful-restart variant stops a contender's servers with
		// their spec's signal: recorded with the contender.
		ContenderSettings: func(c bench.Contender) results.Settings {
			return results.Settings{"stop_signal": unix.SignalName(c.Server.GracefulSignal()) + " (a graceful stop: failover " + FailoverGraceful + ")"}
		},
		Settings: func(quick bool) results.Settings {
			c := cfg.withDefaults(quick)
			return results.Settings{
				"workers":         strconv.Itoa(c.Workers) + ", distinct keys, one Locker shared by the workers",
				"hold":            c.Hold.String(),
				"before":          c.Before.String() + " of load before the fault",
				"pause":           c.Pause.String() + " (P: the killed servers stay down this long before the restart)",
				"after":           c.After.String() + " of load after the restart returned (minority-down: the fault lasts pause + after)",
				"targets":         "restart, graceful-restart: a single server, or a majority floor(n/2)+1 of a cluster's n; minority-down: the largest minority (n-1)/2, cluster contenders only",
				"faults":          "restart, minority-down: SIGKILL; graceful-restart: the contender's graceful stop signal (its stop_signal setting: SIGTERM, PostgreSQL's fast shutdown SIGINT), killed after the backend's grace period; the targets are killed or stopped together and restarted together on the same address through the backend, which waits until the servers serve",
				"retries":         fmt.Sprintf("every contender in the same loop, DoRetry-style: backoff %v to %v doubling, each delay uniform in [d/2, d]; a grant resets it", retryMin, retryMax),
				"attempt_timeout": "one lease per Acquire attempt and per Release (a dead server must not hold a worker longer); contenders' own client timeouts apply inside",
				"in_fault":        "acquire_p99_during_fault: acquisitions (first attempt to grant, retries included) in flight during the fault window (kill to restart begun; minority-down: to the end); release_p99_during_fault likewise for releases",
				"series":          "grants and failed attempts per " + bucket.String() + " from the start of the load; markers: fault, restart begun, restart returned (ms)",
				"split_trials":    strconv.Itoa(c.Trials) + " per repetition (restart-unsafe, restart-delayed)",
				"repetitions":     "as the run's, at most " + strconv.Itoa(failoverRepetitions) + " (every variant restarts servers)",
				"split":           "cluster contenders with 3+ servers: client A reaches a majority [1..q], client B the majority [n-q+1..n] (q = floor(n/2)+1), both through the embedded fault proxy, the other paths refused (the link is closed); A acquires, A's shared servers are SIGKILLed at once and restarted at once (unsafe) or after one lease (delayed), then B tries for 2 leases; A writes to an unfenced guarded store every 10ms while it believes it holds the lock, B once; double grants and unsafe writes by guardedstore.Analyze; the servers' persistence is the contender's (see its settings)",
			}
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
			return []bench.Variant{
				{Name: FailoverRestart, Params: results.VariantParams{Workers: c.Workers, Fault: results.FaultServerKill}, MaxRepetitions: failoverRepetitions, Estimate: steady, Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runFailover(ctx, env, c, FailoverRestart)
				}},
				{Name: FailoverGraceful, Params: results.VariantParams{Workers: c.Workers, Fault: results.FaultServerStop}, MaxRepetitions: failoverRepetitions, Estimate: steady, Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runFailover(ctx, env, c, FailoverGraceful)
				}},
				{Name: FailoverMinority, Params: results.VariantParams{Workers: c.Workers, Fault: results.FaultMinorityDown}, MaxRepetitions: failoverRepetitions, Estimate: minority, Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runFailover(ctx, env, c, FailoverMinority)
				}},
				{Name: FailoverUnsafe, Params: results.VariantParams{Workers: 2, Keys: 1, Fault: results.FaultSplitUnsafe}, MaxRepetitions: failoverRepetitions, Estimate: split, Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runSplit(ctx, env, c, false)
				}},
				{Name: FailoverDelayed, Params: results.VariantParams{Workers: 2, Keys: 1, Fault: results.FaultSplitDelayed}, MaxRepetitions: failoverRepetitions, Estimate: split + time.Duration(c.Trials)*assumedLease/4, Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runSplit(ctx, env, c, true)
				}},
			}
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

// grantEvent is one grant of the steady load.
type grantEvent struct {
	began   time.Time // the acquisition's first attempt
	attempt time.Time // the attempt that succeeded
	at      time.Time // Acquire returned the grant
	token   uint64
	tokenOK bool
	lostAt  time.Time // Lost closed before the release; zero if not
	// released and releaseTook: when the release began and how long it
	// took (a release to a dead server can cost more than the grant).
	released    time.Time
	releaseTook time.Duration
}

// failEvent is one failed Acquire attempt.
type failEvent struct {
	at   time.Time
	kind string
}

// timeline collects the events of every worker. It is safe for concurrent
// use: at a few hundred grants a second a mutex costs nothing.
type timeline struct {
	mu     sync.Mutex
	grants []grantEvent
	fails  []failEvent
	counts map[string]int64
	errs   []string
}

func (t *timeline) grant(g grantEvent) {
	t.mu.Lock()
	t.grants = append(t.grants, g)
	t.mu.Unlock()
}

func (t *timeline) fail(at time.Time, kind string, err error) {
	t.mu.Lock()
	t.fails = append(t.fails, failEvent{at, kind})
	t.counts["failed_"+kind]++
	t.errs = noteError(t.errs, err.Error())
	t.mu.Unlock()
}

func (t *timeline) count(name string) {
	t.mu.Lock()
	t.counts[name]++
	t.mu.Unlock()
}

// errorKind sorts a failed attempt: timeout, refused, reset, unreachable,
// gave_up or other.
func errorKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, bench.ErrGaveUp):
		return "gave_up"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return "reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "unreachable"
	}
	return "other"
}

// steadyWorker acquires key, holds it for hold and releases it until ctx
// ends, retrying failed attempts with backoff.
func steadyWorker(ctx context.Context, l bench.Locker, key string, hold, lease time.Duration, tl *timeline) {
	for ctx.Err() == nil {
		g := grantEvent{began: time.Now()}
		delay := retryMin
		var h bench.Held
		for {
			g.attempt = time.Now()
			actx, cancel := context.WithTimeout(ctx, lease)
			var err error
			h, err = l.Acquire(actx, key)
			cancel()
			if ctx.Err() != nil {
				if h != nil {
					_ = h.Release(context.WithoutCancel(ctx))
				}
				return
			}
			if err == nil {
				break
			}
			tl.fail(time.Now(), errorKind(err), err)
			if load.Sleep(ctx, delay/2+mrand.N(delay/2+1)) != nil {
				return
			}
			delay = min(2*delay, retryMax)
		}
		g.at = time.Now()
		g.token, g.tokenOK = h.Token()
		t := time.NewTimer(hold)
		select {
		case <-t.C:
		case <-h.Lost():
		case <-ctx.Done():
		}
		t.Stop()
		select {
		case <-h.Lost():
			g.lostAt = time.Now()
		default:
		}
		// A release to a dead server must not hold the worker either.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lease)
		g.released = time.Now()
		if err := h.Release(rctx); err != nil && g.lostAt.IsZero() {
			tl.count("release_errors")
		}
		g.releaseTook = time.Since(g.released)
		cancel()
		tl.grant(g)
	}
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

	if err := load.Sleep(ctx, cfg.Before); err != nil {
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
		if err := load.Sleep(ctx, cfg.Pause+cfg.After); err != nil {
			return results.Raw{}, err
		}
		stopLoad()
	} else {
		if err := load.Sleep(ctx, cfg.Pause); err != nil {
			return results.Raw{}, err
		}
		ft.restart = time.Now()
		err := restartAll(ctx, down)
		down = nil
		ft.up = time.Now()
		if err != nil {
			return results.Raw{}, fmt.Errorf("failover: restart: %w", err)
		}
		if err := load.Sleep(ctx, cfg.After); err != nil {
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

// failoverRaw reads the figures of a steady-load variant from its
// timeline.
func failoverRaw(tl *timeline, ft faultTimes) results.Raw {
	grants := slices.SortedFunc(slices.Values(tl.grants), func(a, b grantEvent) int { return a.at.Compare(b.at) })
	// The fault window: until the restart began, or to the end of the load
	// when the servers stay down.
	windowEnd := ft.restart
	if windowEnd.IsZero() {
		windowEnd = ft.end
	}
	raw := results.Raw{
		Seconds: ft.end.Sub(ft.start).Seconds(),
		Counts:  tl.counts,
		Errors:  tl.errs,
	}
	metric := func(name, unit string, v float64) {
		raw.Metrics = append(raw.Metrics, results.Metric{Name: name, Unit: unit, Value: v})
	}

	// The unavailability window: the longest stretch without a grant from
	// the last grant before the fault on; the end of the load closes a
	// stretch that never ended.
	var last time.Time
	var before, during, after int
	var maxBefore, minAfter uint64
	var tokBefore, tokAfter bool
	var whileDown int
	var firstAfterRestart time.Time
	var faultAcquires, faultReleases []float64
	var lost int
	var lostAfter time.Duration
	for _, g := range grants {
		switch {
		case g.at.Before(ft.fault):
			before++
			last = g.at
			if g.tokenOK {
				maxBefore, tokBefore = max(maxBefore, g.token), true
			}
		case g.at.Before(windowEnd):
			during++
		default:
			after++
		}
		if !ft.restart.IsZero() && !g.at.Before(ft.restart) {
			if firstAfterRestart.IsZero() {
				firstAfterRestart = g.at
			}
			if g.tokenOK {
				if !tokAfter || g.token < minAfter {
					minAfter = g.token
				}
				tokAfter = true
			}
		}
		if !g.attempt.Before(ft.faultDone) && g.at.Before(windowEnd) {
			whileDown++
		}
		// Acquisitions and releases in flight during the fault window.
		if !g.at.Before(ft.fault) && g.began.Before(windowEnd) {
			faultAcquires = append(faultAcquires, us(int64(g.at.Sub(g.began))))
		}
		if !g.released.Add(g.releaseTook).Before(ft.fault) && g.released.Before(windowEnd) {
			faultReleases = append(faultReleases, ms(g.releaseTook))
		}
		if !g.lostAt.IsZero() && !g.lostAt.Before(ft.fault) {
			lost++
			lostAfter = max(lostAfter, g.lostAt.Sub(ft.fault))
		}
	}
	gap := time.Duration(0)
	prev := last
	if prev.IsZero() {
		prev = ft.start
	}
	for _, g := range grants {
		if g.at.After(prev) && !g.at.Before(ft.fault) {
			gap = max(gap, g.at.Sub(prev))
			prev = g.at
		}
	}
	gap = max(gap, ft.end.Sub(prev))
	metric("unavailable_ms", "ms", ms(gap))

	// Whole buckets only: a last, partial one would read as a drop.
	buckets := int(ft.end.Sub(ft.start) / bucket)
	grantSeries, failSeries := make([]float64, buckets), make([]float64, buckets)
	for _, g := range grants {
		if i := int(g.at.Sub(ft.start) / bucket); i < buckets {
			grantSeries[i]++
		}
	}
	for _, f := range tl.fails {
		if i := int(f.at.Sub(ft.start) / bucket); i < buckets {
			failSeries[i]++
		}
	}
	// Time with zero grants: the empty whole buckets after the one the
	// fault fell in.
	zero := 0
	for i := int(ft.fault.Sub(ft.start)/bucket) + 1; i < buckets; i++ {
		if grantSeries[i] == 0 {
			zero++
		}
	}
	metric("zero_grant_ms", "ms", float64(zero)*ms(bucket))

	if !ft.restart.IsZero() {
		metric("restart_ms", "ms", ms(ft.up.Sub(ft.restart)))
		if !firstAfterRestart.IsZero() {
			metric("recovery_ms", "ms", ms(firstAfterRestart.Sub(ft.restart)))
		} else {
			raw.Counts["not_recovered"] = 1
		}
	}
	metric("failed_attempts", "count", float64(len(tl.fails)))
	metric("lost_holders", "count", float64(lost))
	if lost > 0 {
		metric("lost_after_ms", "ms", ms(lostAfter))
	}
	metric("grants_while_down", "count", float64(whileDown))
	if sec := ft.fault.Sub(ft.start).Seconds(); before > 0 && sec > 0 {
		rate := float64(during) / windowEnd.Sub(ft.fault).Seconds()
		metric("grant_rate_ratio", "ratio", rate/(float64(before)/sec))
	}
	if len(faultAcquires) > 0 {
		slices.Sort(faultAcquires)
		metric("acquire_p99_during_fault", "us", stats.Sample{Xs: faultAcquires, Sorted: true}.Quantile(0.99))
	}
	if len(faultReleases) > 0 {
		slices.Sort(faultReleases)
		metric("release_p99_during_fault", "ms", stats.Sample{Xs: faultReleases, Sorted: true}.Quantile(0.99))
	}
	if tokBefore && tokAfter {
		mono := 0.0
		if minAfter > maxBefore {
			mono = 1
		}
		metric("tokens_monotonic", "bool", mono)
		metric("token_gap", "count", float64(minAfter)-float64(maxBefore))
	}
	raw.Counts["grants"] = int64(len(grants))
	raw.Counts["grants_before"], raw.Counts["grants_during"], raw.Counts["grants_after"] = int64(before), int64(during), int64(after)
	raw.Counts["lost_holders"] = int64(lost)
	marks := []float64{ms(ft.fault.Sub(ft.start)), ms(ft.faultDone.Sub(ft.start))}
	if !ft.restart.IsZero() {
		marks = append(marks, ms(ft.restart.Sub(ft.start)), ms(ft.up.Sub(ft.start)))
	}
	raw.Series = []results.Series{
		{Name: "grants_per_100ms", Unit: "count", Values: grantSeries},
		{Name: "failed_per_100ms", Unit: "count", Values: failSeries},
		{Name: "fault_marks", Unit: "ms", Values: marks},
	}
	return raw
}
