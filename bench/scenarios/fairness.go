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
	"time"

	"github.com/aclements/go-moremath/stats"
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"

	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
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
	fm := results.FairnessMetrics
	return bench.Scenario{
		Name:    "fairness",
		Title:   "Fairness under contention",
		Metrics: fm.List(),
		Decides: []results.DecisionFigure{
			{ID: "fifo", Text: "strict FIFO: no grant overtook an earlier request (hot lock)", Where: hot, Metric: fm.FIFOInversionsPer1k.Name, Counts: "inversions per 1,000 grants", Op: results.AtMost},
			{ID: "hot-wait-p99", Text: "wait for the hot lock, p99", Where: hot, Metric: fm.WaitP99.Name},
			{ID: "hot-coordinator-load", Text: "coordinator commands/s while clients wait for the hot lock", Where: hot, Metric: fm.ServerOpsPerSec.Name},
		},
		Settings: func(quick bool) results.Settings {
			c := cfg.withDefaults(quick)
			return results.Settings{
				"clients":         strconv.Itoa(c.Clients),
				"client":          "each client has its own Locker (own connections/pool), one hot lock",
				"loop":            "acquire -> hold -> release -> think, on load.Run (the load generator of every scenario); the run stops at the window's end",
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

// snapshot is the coordinator's and the bench's counters at one edge of
// the window.
type snapshot struct {
	at        time.Duration // since the run's start
	counts    bench.Counts
	serverCPU time.Duration
	cpuOK     bool
	cpuSource string
	selfCPU   time.Duration
}

func take(ctx context.Context, env *bench.Env, probe bench.Coordinator) (snapshot, error) {
	var s snapshot
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

// runFairness measures one repetition: the clients loop acquire → hold →
// release → think on one key, on the suite's load generator (load.Run),
// the counters read at the window's edges.
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
	var edges [2]snapshot
	log, err := load.Run(ctx, load.Traffic{
		Clients: cfg.Clients,
		Locker:  func(c int) bench.Locker { return lockers[c] },
		Key:     func(int, int) string { return key },
		Plan:    func(int) load.Plan { return load.FixedPlan{Hold: cfg.Hold, Think: cfg.Think} },
		Warmup:  cfg.Warmup,
		Window:  cfg.Duration,
		// No grace: the run stops at the window's end, and the requests
		// still waiting then are pending.
		Edge: func(ctx context.Context, e load.Edge) (err error) {
			edges[e], err = take(ctx, env, probe)
			return err
		},
	})
	if err != nil {
		return results.Raw{}, err
	}
	a, b := edges[load.WindowStart], edges[load.WindowEnd]
	a.at, b.at = log.Edges[load.WindowStart], log.Edges[load.WindowEnd]
	reqs, failures, lost := fairnessRequests(log)
	f := AnalyzeFairness(reqs, cfg.Clients, a.at, b.at, cfg.InversionSlack)
	return record(cfg, f, reqs, a, b, probe, failures, lost, log.Errors)
}

// fairnessRequests reads the requests of the run's log: every request a
// client made, the warm-up's included (they can be overtaken too), with
// its call, grant and release; one still waiting at the stop is pending.
// Failures count failed acquires and failed releases, lost the grants
// whose lock was lost while held.
func fairnessRequests(log *load.Log) (reqs []FairnessRequest, failures, lost int64) {
	for _, e := range log.Events {
		r := FairnessRequest{Client: e.Client, Requested: e.Call}
		switch e.Outcome {
		case load.Granted:
			r.Granted, r.Grant, r.Released, r.End = true, e.Grant, e.Release, e.Grant
		case load.Failed:
			r.End = e.Ended
			failures++
		case load.Censored:
			r.End = Pending
		default:
			continue // never called: the stop came first
		}
		if e.ReleaseFailed {
			failures++
		}
		if e.Lost {
			lost++
		}
		reqs = append(reqs, r)
	}
	return reqs, failures, lost
}

// record turns the figures into the repetition's record.
func record(cfg FairnessConfig, f FairnessFigures, reqs []FairnessRequest, a, b snapshot, probe bench.Coordinator,
	failures, lost int64, errs []string) (results.Raw, error) {
	fm := results.FairnessMetrics
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
			fm.JainIndex.Of(f.Jain),
			fm.FIFOInversionsPer1k.Of(float64(f.Inversions) * 1000 / float64(grants)),
			fm.WaitP50.Of(msOf(waits.ValueAtQuantile(50))),
			fm.WaitP99.Of(msOf(waits.ValueAtQuantile(99))),
			fm.WaitMax.Of(msOf(waits.Max())),
			fm.Utilisation.Of(float64(f.Held) / float64(span)),
			fm.Grants.Of(float64(grants)),
		},
	}
	if probe != nil {
		cmds := b.counts.Commands - a.counts.Commands
		attempts := b.counts.Attempts - a.counts.Attempts
		raw.Counts["server_commands"] = cmds
		raw.Counts["attempts"] = attempts
		raw.Metrics = append(raw.Metrics,
			fm.ServerOpsPerSec.Of(float64(cmds)/span.Seconds()),
			fm.ServerOpsPerGrant.Of(float64(cmds)/float64(grants)),
			fm.AttemptsPerGrant.Of(float64(attempts)/float64(grants)),
		)
	}
	source := "unavailable (external server)"
	if a.cpuOK && b.cpuOK {
		source = a.cpuSource
		raw.Metrics = append(raw.Metrics, fm.ServerCPUMsPerSec.Of(float64(b.serverCPU-a.serverCPU)/float64(time.Millisecond)/span.Seconds()))
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
				fm.WaitP50.Of(stats.Sample{Xs: w, Sorted: true}.Quantile(0.5)),
				fm.WaitMax.Of(w[len(w)-1]),
			)
		}
		raw.Clients = append(raw.Clients, c)
	}
	return raw, nil
}

// hot picks the fairness variant: clients in a closed loop on one shared
// lock.
var hot = &results.VariantParams{Load: results.LoadClosed, Contended: true}
