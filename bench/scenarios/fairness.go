package scenarios

// The fairness scenario: N clients, each with its own Locker (its own
// connections), loop acquire → hold → release → think on one hot lock.
// Every request and grant is recorded on the bench's monotonic clock; the
// figures are Jain's index over grants per client, FIFO inversions, waits,
// lock utilisation, and the coordinator's load while clients wait (its own
// command counters and its CPU).

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aclements/go-moremath/stats"
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"

	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/output/results"
)

// Defaults of FairnessConfig.
const (
	DefaultClients  = 8
	DefaultHold     = 10 * time.Millisecond
	DefaultThink    = 10 * time.Millisecond
	DefaultDuration = 3 * time.Second
	DefaultWarmup   = 400 * time.Millisecond
	// DefaultQuickDuration stays above PostgreSQL's one-second statistics
	// interval: a shorter window read no transactions (a load of 0/s).
	DefaultQuickDuration = 1200 * time.Millisecond
	DefaultQuickWarmup   = 150 * time.Millisecond
	// DefaultInversionSlack: requests made within 1ms of each other count
	// as simultaneous. A request time is taken in the bench before the
	// request travels (a monolock claim first dials a connection), so two
	// requests that close may reach the coordinator in either order.
	DefaultInversionSlack = time.Millisecond
)

// failurePause keeps a client whose Acquire failed from spinning.
const failurePause = 10 * time.Millisecond

// FairnessConfig configures the fairness scenario. Zero fields take the
// defaults.
type FairnessConfig struct {
	// Clients is the number of contending clients, each with its own
	// Locker; default DefaultClients. The variant is named "n<Clients>".
	Clients int
	// Hold is how long each grant is held, Think the pause after a release
	// before the next request; defaults DefaultHold and DefaultThink.
	Hold, Think time.Duration
	// Duration is the measured window and Warmup the unmeasured run before
	// it; defaults DefaultDuration and DefaultWarmup, or the Quick defaults
	// in a quick run.
	Duration, Warmup time.Duration
	// InversionSlack: see DefaultInversionSlack.
	InversionSlack time.Duration
}

func (c FairnessConfig) withDefaults(quick bool) FairnessConfig {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.Clients <= 0 {
		c.Clients = DefaultClients
	}
	def(&c.Hold, DefaultHold)
	def(&c.Think, DefaultThink)
	def(&c.InversionSlack, DefaultInversionSlack)
	if quick {
		def(&c.Duration, DefaultQuickDuration)
		def(&c.Warmup, DefaultQuickWarmup)
	}
	def(&c.Duration, DefaultDuration)
	def(&c.Warmup, DefaultWarmup)
	return c
}

// Scenario returns the fairness scenario: one variant "n<Clients>" with the
// metrics jain_index, fifo_inversions_per_1k, wait_p50, wait_p99, wait_max
// (ms), utilisation (ratio), server_ops_per_sec (1/s) and grants (count),
// plus attempts_per_grant and server_cpu_ms_per_sec, and a per-client
// table. Floors do not take part; waiting-strategy variants do.
func (cfg FairnessConfig) Scenario() bench.Scenario {
	lower := results.BetterLower
	return bench.Scenario{
		Name:  "fairness",
		Title: "Fairness under contention",
		Metrics: []results.MetricSpec{
			{Name: "jain_index", Unit: "ratio", Better: results.BetterHigher, Label: "Jain index", Kind: results.KindRatio, Key: true},
			{Name: "fifo_inversions_per_1k", Unit: "count", Better: lower, Label: "FIFO inversions per 1,000 grants", Kind: results.KindCount, Key: true},
			{Name: "wait_p50", Unit: "ms", Better: lower, Label: "wait p50", Kind: results.KindLatency},
			{Name: "wait_p99", Unit: "ms", Better: lower, Label: "wait p99", Kind: results.KindLatency, Key: true},
			{Name: "wait_max", Unit: "ms", Better: lower, Label: "longest wait", Kind: results.KindLatency},
			{Name: "server_ops_per_sec", Unit: "1/s", Better: lower, Label: "coordinator commands/s while clients wait", Kind: results.KindRate, Key: true},
			{Name: "server_ops_per_grant", Unit: "count", Better: lower, Label: "coordinator commands per grant", Kind: results.KindCount},
			{Name: "attempts_per_grant", Unit: "count", Better: lower, Label: "acquire attempts per grant", Kind: results.KindCount},
			{Name: "server_cpu_ms_per_sec", Unit: "ms/s", Better: lower, Label: "coordinator CPU", Kind: results.KindCPU},
			{Name: "utilisation", Unit: "ratio", Label: "share of time the lock was held", Kind: results.KindRatio},
			{Name: "grants", Unit: "count", Label: "grants", Kind: results.KindCount},
		},
		Decides: []results.DecisionFigure{
			{ID: "fifo", Text: "strict FIFO: no grant overtook an earlier request (hot lock)", Where: hot, Metric: "fifo_inversions_per_1k", Op: results.AtMost},
			{ID: "hot-wait-p99", Text: "wait for the hot lock, p99", Where: hot, Metric: "wait_p99"},
			{ID: "hot-coordinator-load", Text: "coordinator commands/s while clients wait for the hot lock", Where: hot, Metric: "server_ops_per_sec"},
		},
		Settings: func(quick bool) results.Settings {
			c := cfg.withDefaults(quick)
			return results.Settings{
				"clients":         strconv.Itoa(c.Clients),
				"client":          "each client has its own Locker (own connections/pool), one hot lock",
				"loop":            "acquire -> hold -> release -> think",
				"hold":            c.Hold.String(),
				"think":           c.Think.String(),
				"warmup":          c.Warmup.String(),
				"duration":        c.Duration.String(),
				"samples":         "the wait percentiles rest on the grants of the window (each record's grants count, at most window / hold); " + tailNote,
				"request_time":    "bench monotonic clock, before Acquire is called",
				"grant_time":      "bench monotonic clock, when Acquire returned",
				"inversion":       "a grant in the window that overtook an earlier request (made more than inversion_slack before it) still pending at the grant; requests of the warm-up count as overtaken too",
				"inversion_slack": c.InversionSlack.String(),
				"utilisation":     "union of [grant, release returned] over the window / window",
				"server_ops":      "commands the coordinator served over the window, from its own counters (each contender's counters setting)",
				"attempts":        "acquire attempts the coordinator saw over the window, one per client attempt (each contender's counters setting)",
				"server_cpu":      "the contender's server processes over the window, where the backend can see them",
			}
		},
		Variants: func(quick bool) []bench.Variant {
			c := cfg.withDefaults(quick)
			return []bench.Variant{{
				Name:      "n" + strconv.Itoa(c.Clients),
				Contended: true,
				Params:    results.VariantParams{Workers: c.Clients, Keys: 1, Load: results.LoadClosed},
				Estimate:  c.Warmup + c.Duration + 200*time.Millisecond, // opening and closing the clients' lockers
				Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return runFairness(ctx, env, c)
				},
			}}
		},
	}
}

// clientLog is what one client goroutine records.
type clientLog struct {
	reqs     []FairnessRequest
	failures int64
	lost     int64
	errs     []string
}

func (l *clientLog) note(err error) { l.errs = load.NoteError(l.errs, err.Error()) }

// snapshot is the coordinator's and the bench's counters at one moment.
type snapshot struct {
	at        time.Duration // since the run's start
	counts    bench.Counts
	serverCPU time.Duration
	cpuOK     bool
	cpuSource string
	selfCPU   time.Duration
}

func take(ctx context.Context, env *bench.Env, probe bench.Coordinator, start time.Time) (snapshot, error) {
	s := snapshot{at: time.Since(start)}
	var err error
	if probe != nil {
		if s.counts, err = probe.Counts(ctx); err != nil {
			return s, err
		}
	}
	if s.serverCPU, s.cpuSource, s.cpuOK, err = env.ServerCPU(ctx); err != nil {
		return s, err
	}
	s.selfCPU, err = host.SelfCPU()
	return s, err
}

// runFairness measures one repetition.
func runFairness(ctx context.Context, env *bench.Env, cfg FairnessConfig) (results.Raw, error) {
	lockers := make([]bench.Locker, 0, cfg.Clients)
	defer func() {
		for _, l := range lockers {
			l.Close()
		}
	}()
	for range cfg.Clients {
		l, err := env.Open(ctx)
		if err != nil {
			return results.Raw{}, err
		}
		lockers = append(lockers, l)
	}
	probe, err := openCoordinator(env)
	if err != nil {
		return results.Raw{}, err
	}
	if probe != nil {
		defer probe.Close()
	}

	key := "fairness-" + randomHex()
	start := time.Now()
	since := func() time.Duration { return time.Since(start) }
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	logs := make([]clientLog, cfg.Clients)
	var wg sync.WaitGroup
	for i, l := range lockers {
		wg.Go(func() { logs[i] = loop(runCtx, l, i, key, cfg, since) })
	}
	a, b, err := window(ctx, env, probe, start, cfg)
	stop()
	wg.Wait()
	if err != nil {
		return results.Raw{}, err
	}
	if ctx.Err() != nil {
		return results.Raw{}, ctx.Err()
	}
	var reqs []FairnessRequest
	var failures, lost int64
	var errs []string
	for _, l := range logs {
		reqs = append(reqs, l.reqs...)
		failures += l.failures
		lost += l.lost
		for _, e := range l.errs {
			errs = load.NoteError(errs, e)
		}
	}
	f := AnalyzeFairness(reqs, cfg.Clients, a.at, b.at, cfg.InversionSlack)
	return record(cfg, f, reqs, a, b, probe, failures, lost, errs)
}

// window waits the warm-up, takes the first snapshot, waits the measured
// duration and takes the second.
func window(ctx context.Context, env *bench.Env, probe bench.Coordinator, start time.Time, cfg FairnessConfig) (a, b snapshot, err error) {
	if err := bench.Sleep(ctx, cfg.Warmup); err != nil {
		return a, b, err
	}
	if a, err = take(ctx, env, probe, start); err != nil {
		return a, b, err
	}
	if err := bench.Sleep(ctx, cfg.Duration); err != nil {
		return a, b, err
	}
	b, err = take(ctx, env, probe, start)
	return a, b, err
}

// loop is one client: acquire → hold → release → think until ctx ends.
func loop(ctx context.Context, l bench.Locker, client int, key string, cfg FairnessConfig, since func() time.Duration) clientLog {
	var log clientLog
	for ctx.Err() == nil {
		r := FairnessRequest{Client: client, Requested: since(), End: Pending}
		h, err := l.Acquire(ctx, key)
		if err != nil {
			if ctx.Err() != nil {
				log.reqs = append(log.reqs, r) // still pending when the run stopped
				return log
			}
			r.End = since()
			log.reqs = append(log.reqs, r)
			log.failures++
			log.note(err)
			_ = bench.Sleep(ctx, failurePause)
			continue
		}
		r.Granted, r.Grant = true, since()
		r.End = r.Grant
		lostEarly := false
		t := time.NewTimer(cfg.Hold)
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-h.Lost():
			lostEarly = true
		}
		t.Stop()
		if lostEarly {
			log.lost++
		}
		// Release even when ctx ended: the lock must not outlive the client.
		if err := h.Release(context.WithoutCancel(ctx)); err != nil {
			log.failures++
			log.note(err)
		}
		r.Released = since()
		log.reqs = append(log.reqs, r)
		_ = bench.Sleep(ctx, cfg.Think)
	}
	return log
}

// record turns the figures into the repetition's record.
func record(cfg FairnessConfig, f FairnessFigures, reqs []FairnessRequest, a, b snapshot, probe bench.Coordinator,
	failures, lost int64, errs []string) (results.Raw, error) {
	span := b.at - a.at
	var grants int64
	for _, g := range f.Grants {
		grants += g
	}
	if grants == 0 {
		return results.Raw{}, fmt.Errorf("fairness: no grant in %v (%d failures): %v", span.Round(time.Millisecond), failures, errs)
	}
	waits := load.NewHistogram()
	perClient := make([][]float64, cfg.Clients) // waits in ms
	requests := make([]int64, cfg.Clients)
	for _, r := range reqs {
		if r.Requested >= a.at && r.Requested < b.at {
			requests[r.Client]++
		}
		if r.Granted && r.Grant >= a.at && r.Grant < b.at {
			_ = waits.RecordValue(int64(r.Grant - r.Requested))
			perClient[r.Client] = append(perClient[r.Client], ms(r.Grant-r.Requested))
		}
	}
	hist, err := results.NewHistogram("wait", "ns", waits)
	if err != nil {
		return results.Raw{}, err
	}
	msOf := func(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }
	raw := results.Raw{
		Seconds:    span.Seconds(),
		Histograms: []results.Histogram{hist},
		Errors:     errs,
		Counts: map[string]int64{
			"grants": grants, "fifo_inversions": f.Inversions, "fifo_inversions_strict": f.StrictInversions,
			"failures": failures, "lost": lost,
		},
		Metrics: []results.Metric{
			{Name: "jain_index", Unit: "ratio", Value: f.Jain},
			{Name: "fifo_inversions_per_1k", Unit: "count", Value: float64(f.Inversions) * 1000 / float64(grants)},
			{Name: "wait_p50", Unit: "ms", Value: msOf(waits.ValueAtQuantile(50))},
			{Name: "wait_p99", Unit: "ms", Value: msOf(waits.ValueAtQuantile(99))},
			{Name: "wait_max", Unit: "ms", Value: msOf(waits.Max())},
			{Name: "utilisation", Unit: "ratio", Value: float64(f.Held) / float64(span)},
			{Name: "grants", Unit: "count", Value: float64(grants)},
		},
	}
	if probe != nil {
		cmds := b.counts.Commands - a.counts.Commands
		attempts := b.counts.Attempts - a.counts.Attempts
		raw.Counts["server_commands"] = cmds
		raw.Counts["attempts"] = attempts
		raw.Metrics = append(raw.Metrics,
			results.Metric{Name: "server_ops_per_sec", Unit: "1/s", Value: float64(cmds) / span.Seconds()},
			results.Metric{Name: "server_ops_per_grant", Unit: "count", Value: float64(cmds) / float64(grants)},
			results.Metric{Name: "attempts_per_grant", Unit: "count", Value: float64(attempts) / float64(grants)},
		)
	}
	source := "unavailable (external server)"
	if a.cpuOK && b.cpuOK {
		source = a.cpuSource
		raw.Metrics = append(raw.Metrics, results.Metric{
			Name: "server_cpu_ms_per_sec", Unit: "ms/s",
			Value: float64(b.serverCPU-a.serverCPU) / float64(time.Millisecond) / span.Seconds(),
		})
	}
	raw.CPU = &results.CPU{
		ServerMS:     float64(b.serverCPU-a.serverCPU) / float64(time.Millisecond),
		ServerSource: source,
		ClientMS:     float64(b.selfCPU-a.selfCPU) / float64(time.Millisecond),
	}
	for i, g := range f.Grants {
		c := results.Client{
			ID:     "c" + strconv.Itoa(i+1),
			Counts: map[string]int64{"grants": g, "requests": requests[i]},
			Metrics: []results.Metric{
				{Name: "grant_share", Unit: "ratio", Value: float64(g) / float64(grants)},
			},
		}
		if w := perClient[i]; len(w) > 0 {
			slices.Sort(w)
			c.Metrics = append(c.Metrics,
				results.Metric{Name: "wait_p50", Unit: "ms", Value: stats.Sample{Xs: w, Sorted: true}.Quantile(0.5)},
				results.Metric{Name: "wait_max", Unit: "ms", Value: w[len(w)-1]},
			)
		}
		raw.Clients = append(raw.Clients, c)
	}
	return raw, nil
}

// hot picks the fairness variant: clients in a closed loop on one shared
// lock.
var hot = &results.VariantParams{Load: results.LoadClosed, Contended: true}
