package scenarios

// The scale scenario: how a contender's cost grows with the number of
// clients holding or waiting. C sessions (bench/load/sessions) hold a lock each
// (idle-*), wait on one lock (queue-*), or cycle on C/10 locks (churn-*);
// the figures are the servers' memory per session, their CPU, the
// commands and keep-alives they serve, promotion latency at the front of a
// deep queue, and grants under churn. Every session is counted as one open
// file in the bench and in the server (a connection per claim, the worst
// case among the contenders), so every contender runs at the same C and a
// C the open-file limits cannot hold is skipped for all, with the reason.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/load/sessions"
	"github.com/monolock/monolock-bench/bench/load/spreaddial"
	"github.com/monolock/monolock-bench/bench/output/results"
)

// MaxSessions in ScaleConfig.Idle stands for "the largest C the open-file
// limits allow" (variant idle-max).
const MaxSessions = 0

// Defaults of ScaleConfig.
const (
	DefaultScaleLongLease  = 30 * time.Second
	DefaultScaleShortLease = 2 * time.Second
	// DefaultScaleQuickLease is the long lease of a quick run: the idle
	// ramp (lease/3) and window (lease/4 periods) shrink with it. At 6s
	// etcd's 10k sessions (a renewal every 2s each) still kept their
	// leases on 2 cores; at 2s they did not.
	DefaultScaleQuickLease = 6 * time.Second
	// scaleRepetitions caps the repetitions of every scale variant in a
	// full run: idle-max and queue-10k take minutes per
	// contender, and the figures are capacities rather than noisy rates.
	scaleRepetitions      = 1
	DefaultScaleMinWindow = 3 * time.Second
	// DefaultScaleQuickMinWindow: the idle windows stay whole lease/4
	// periods (7.5s at 30s), the queue and churn windows shrink.
	DefaultScaleQuickMinWindow = time.Second
	DefaultPromotions          = 30
	DefaultQuickPromotions     = 10
	DefaultChurnHold           = 10 * time.Millisecond
	// saturatedCPU is the coordinator CPU per second at which a polling
	// queue is taken to saturate it: most of one core.
	saturatedCPU = 800 * time.Millisecond
	// minMemorySessions is the fewest sessions whose memory is divided
	// per session: a few sessions' kilobytes are within the allocator's
	// and the page cache's noise (a queue of depth 1 showed negative
	// bytes per session).
	minMemorySessions = 32
	// churnWarmup runs before the churn window.
	churnWarmup = time.Second
	// memoryEvery is how often the servers' memory is sampled while
	// sessions open, for the slope.
	memoryEvery = 250 * time.Millisecond
	// promotionTimeout bounds one promotion; a queue that does not promote
	// in that time stops being sampled.
	promotionTimeout = 10 * time.Second
	// scaleTimeout and scaleQuickTimeout bound opening, promoting and
	// closing in one variant, per contender: a contender that cannot open
	// C sessions in that time (postgres: a backend process per session)
	// records the sessions it reached and why it stopped.
	scaleTimeout      = 2 * time.Minute
	scaleQuickTimeout = 15 * time.Second
)

// ScaleConfig configures the scale scenario. Zero fields take defaults.
type ScaleConfig struct {
	// Idle are the session counts of the idle-holder variants, MaxSessions
	// for idle-max. Default 1k, 10k, max, 50k, 100k; quick 1k, 10k.
	Idle []int
	// LongLease names the variants idle-<C> (default 30s), ShortLease the
	// variants idle-<C>-lease2s (default 2s; not in quick). A zero
	// ShortLease in a config with Idle set runs the long lease only.
	LongLease, ShortLease time.Duration
	// Queue are the depths of the queue variants (waiters behind one
	// holder). Default 1, 1k, 10k; quick 1, 1k.
	Queue []int
	// QueueLease is the lease of the queue variants; default LongLease.
	// The queue opens at once (to time its filling), so its window spans
	// whole lease/4 periods to count the waiters' keep-alives exactly. At
	// 2s, 10k waiters starved of CPU on a loaded 2-core machine lost
	// their places while the queue filled.
	QueueLease time.Duration
	// Churn are the session counts of the churn variants (on C/10 locks).
	// Default 10k; quick 1k.
	Churn []int
	// MinWindow is the shortest measured window; default 3s, quick 1s.
	MinWindow time.Duration
	// Promotions is the number of promotions sampled per queue variant;
	// default 30, quick 10.
	Promotions int
	// PromotionTime bounds the sampling of promotions per queue variant;
	// default 8s, quick 2s.
	PromotionTime time.Duration
	// ConnsPerPair is the most connections one (source, destination)
	// address pair carries before the sessions spread over more addresses.
	// Default: the usable ports of the host's range (spreaddial). Tests
	// set it low to spread at small C.
	ConnsPerPair int
	// Concurrency bounds the sessions opening at once; default
	// sessions.DefaultConcurrency.
	Concurrency int
	// reuse skips the fresh restart of the servers before each variant
	// (quick runs: a restart costs seconds per contender and variant).
	reuse bool
	// timeout bounds one variant per contender (scaleTimeout, quick
	// scaleQuickTimeout).
	timeout time.Duration
}

func (c ScaleConfig) withDefaults(quick bool) ScaleConfig {
	idleSet := len(c.Idle) > 0
	if !idleSet {
		c.Idle = []int{1000, 10000, MaxSessions, 50000, 100000}
		if quick {
			c.Idle = []int{1000, 10000}
		}
	}
	if c.LongLease <= 0 {
		c.LongLease = DefaultScaleLongLease
		if quick {
			c.LongLease = DefaultScaleQuickLease
		}
	}
	if c.ShortLease <= 0 && !idleSet && !quick {
		c.ShortLease = DefaultScaleShortLease
	}
	if c.Queue == nil {
		c.Queue = []int{1, 1000, 10000}
		if quick {
			c.Queue = []int{1, 1000}
		}
	}
	if c.QueueLease <= 0 {
		c.QueueLease = c.LongLease
	}
	if c.Churn == nil {
		c.Churn = []int{10000}
		if quick {
			c.Churn = []int{1000}
		}
	}
	if c.MinWindow <= 0 {
		c.MinWindow = DefaultScaleMinWindow
		if quick {
			c.MinWindow = DefaultScaleQuickMinWindow
		}
	}
	if c.Promotions <= 0 {
		c.Promotions = DefaultPromotions
		if quick {
			c.Promotions = DefaultQuickPromotions
		}
	}
	if c.PromotionTime <= 0 {
		c.PromotionTime = 8 * time.Second
		if quick {
			c.PromotionTime = 2 * time.Second
		}
	}
	if c.Concurrency <= 0 {
		c.Concurrency = sessions.DefaultConcurrency
	}
	c.reuse = quick
	c.timeout = scaleTimeout
	if quick {
		c.timeout = scaleQuickTimeout
	}
	return c
}

// countName is the name of a session count in a variant: 1k, 10k, 40, max.
func countName(n int) string {
	switch {
	case n == MaxSessions:
		return "max"
	case n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// leaseSuffix is "" for the long lease, else "-lease2s" and the like.
func (c ScaleConfig) leaseSuffix(lease time.Duration) string {
	if lease == c.LongLease {
		return ""
	}
	return "-lease" + lease.String()
}

// window is the idle measuring window: the shortest whole number of
// lease/4 periods that lasts MinWindow. A keep-alive every lease/4
// (monolock) then counts exactly, whatever the sessions' phases; one every
// lease/3 (Redis watchdogs) counts exactly because the sessions start
// spread over lease/3 (the ramp).
func (c ScaleConfig) window(lease time.Duration) time.Duration {
	q := lease / 4
	n := max(1, int(math.Ceil(float64(c.MinWindow)/float64(q))))
	return time.Duration(n) * q
}

// openCost is the ETA's cost of opening n sessions at a lease: ~1ms per
// session on 2 cores (measured: 10k in 10–40s), more at a short lease
// whose keep-alives compete with the opening.
func openCost(n int, lease time.Duration) time.Duration {
	f := max(1, int(DefaultScaleLongLease/lease)/4)
	return time.Duration(n*f) * time.Millisecond
}

// planEstimate is a variant's ETA estimate: est, or nothing when its
// claims exceed what the bench's own open-file limit allows (most), as
// the variant then skips at once.
func planEstimate(claims, most int, est time.Duration) time.Duration {
	if claims > most {
		return 0
	}
	return est
}

// benchMostSessions is the most sessions the bench's own open-file limit
// allows once raised to its hard limit (as prepare raises it), for the
// ETA; without a readable limit, no cap.
func benchMostSessions() int {
	l, err := host.ProcessFileLimits(os.Getpid(), "bench")
	if err != nil {
		return math.MaxInt
	}
	l.Soft = l.Hard
	return l.MaxSessions(1, sessions.DefaultReserve)
}

// Scale is the scale scenario with the default parameters.
func Scale() bench.Scenario { return ScaleConfig{}.Scenario() }

// Scenario returns the scale scenario (see the file comment). Floors do not
// take part; waiting-strategy variants take part in queue and churn.
func (cfg ScaleConfig) Scenario() bench.Scenario {
	st := &scaleState{saturated: map[string]string{}}
	return bench.Scenario{
		Name:    "scale",
		Title:   "Scale",
		Metrics: scaleMetrics,
		Decides: cfg.decides(),
		Settings: func(quick bool) results.Settings {
			c := cfg.withDefaults(quick)
			s := results.Settings{
				"sessions":      "bench/load/sessions: one Locker per variant shared by all C sessions, session i on key i mod K; opened at most " + strconv.Itoa(c.Concurrency) + " at a time; load generated by the bench process alone",
				"limits":        "every session counted as one open file in the bench and in each server (a connection per claim, the worst case), so all contenders run at the same C; the largest C is (RLIMIT_NOFILE soft − files in use − " + strconv.Itoa(sessions.DefaultReserve) + " reserve) of the tighter process; a C beyond it is skipped with the reason; the limits and the port plan are in each record's counts",
				"addresses":     "above the connections one (source, destination) pair can carry (the usable ephemeral ports) the sessions spread over 127.0.0.x sources (server on loopback) or extra server addresses (containers: extra networks); host sysctls are read, never changed",
				"fresh_server":  map[bool]string{false: "each variant kills and restarts the contender's servers first (where the backend can), so the empty baseline is a server that never held a session", true: "quick: the servers are not restarted between variants (memory baselines are those the previous variant left)"}[c.reuse],
				"idle":          "C holders on C keys at lease " + c.LongLease.String() + " (idle-<C>)" + map[bool]string{true: " and " + c.ShortLease.String() + " (idle-<C>-lease" + c.ShortLease.String() + ")", false: ""}[c.ShortLease > 0] + "; starts spread over lease/3; the window is the shortest multiple of lease/4 ≥ " + c.MinWindow.String() + " (" + c.window(c.LongLease).String() + " at " + c.LongLease.String() + ")",
				"idle_counts":   fmt.Sprint(names(c.Idle)),
				"memory":        "server: anonymous memory (RssAnon of a local process; a container cgroup's total_rss (v1) or anon (v2), read on the host, else from the engine's stats) at C minus the empty server, / C (C ≥ " + strconv.Itoa(minMemorySessions) + "); slope: least squares over samples every " + memoryEvery.String() + " while the sessions open; client: Go heap + stacks of the bench after GC, / C; both only when all C sessions are still held after the window (lost sessions leave memory not yet returned)",
				"bench_cpu":     "bench_cpu_ms_per_sec: the bench process's own CPU (getrusage) over the window: the load generator shares the machine's cores with the servers, so a contender whose keep-alives cost the two together more than the cores loses sessions",
				"ops":           "the coordinator's own counters (each contender's counters setting) over the window; heartbeats = its keep-alive commands",
				"queue":         "one holder and N waiters on one key (queue-<N>) at lease " + c.QueueLease.String() + ", opened at once; queue_fill_ms: time until the coordinator counts N waiting (its waiting counter: queued waiters, or attempts for polling contenders); a window of " + c.window(c.QueueLease).String() + " (whole lease/4 periods) measures the load of the waiting (waiting_ops_per_sec: commands other than keep-alives); then up to " + strconv.Itoa(c.Promotions) + " promotions from the front (for at most " + c.PromotionTime.String() + "): release of the holder → grant of the next, bench monotonic clock",
				"queue_depths":  fmt.Sprint(names(c.Queue)),
				"saturation":    "a polling queue whose coordinator spends ≥ " + saturatedCPU.String() + " CPU/s saturates it; deeper queues of that contender are skipped (capped) with the depth where it saturated",
				"churn":         "C sessions on C/10 keys, each cycling acquire → hold " + DefaultChurnHold.String() + " → release; warm-up " + churnWarmup.String() + ", window " + c.MinWindow.String(),
				"churn_counts":  fmt.Sprint(names(c.Churn)),
				"repetitions":   "at most " + strconv.Itoa(scaleRepetitions) + " (the run's if fewer; idle-max and queue-10k take minutes per contender); each repetition reopens every session",
				"time_cap":      "every variant ends for a contender after " + c.timeout.String() + " (" + (c.timeout + c.LongLease).String() + " for idle): a contender that has not opened its C sessions by then records the sessions it reached and the reason",
				"measure_times": "short windows (a few seconds) to fit the suite's time budget: figures are steady-state rates over whole keep-alive periods, not long-run averages",
			}
			return s
		},
		Variants: func(quick bool) []bench.Variant {
			c := cfg.withDefaults(quick)
			most := benchMostSessions()
			var vs []bench.Variant
			for _, lease := range []time.Duration{c.LongLease, c.ShortLease} {
				if lease <= 0 {
					continue
				}
				for _, n := range c.Idle {
					claims := n
					if n == MaxSessions {
						claims = min(most, slices.Max(c.Idle))
					}
					est := lease/3 + c.window(lease) + 5*time.Second + openCost(claims, lease)
					vs = append(vs, bench.Variant{
						Name: "idle-" + countName(n) + c.leaseSuffix(lease), Claims: claims, MaxRepetitions: scaleRepetitions,
						Params:   results.VariantParams{Load: results.LoadIdle, Sessions: n, SessionsMax: n == MaxSessions, Keys: n, Lease: lease.String()},
						Estimate: planEstimate(claims, most, est),
						Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
							return runIdle(ctx, env, c, n, lease)
						},
					})
				}
			}
			for _, n := range c.Queue {
				est := c.window(c.QueueLease) + 5*time.Second + c.PromotionTime/2 + openCost(n, c.QueueLease)
				vs = append(vs, bench.Variant{
					Name: "queue-" + countName(n), Contended: true, Claims: n + 1, MaxRepetitions: scaleRepetitions,
					Params:   results.VariantParams{Load: results.LoadQueue, Depth: n, Keys: 1, Lease: c.QueueLease.String()},
					Estimate: planEstimate(n+1, most, est),
					Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
						return runQueue(ctx, env, c, n, st)
					},
				})
			}
			for _, n := range c.Churn {
				vs = append(vs, bench.Variant{
					Name: "churn-" + countName(n), Contended: true, Claims: n, MaxRepetitions: scaleRepetitions,
					Params:   results.VariantParams{Load: results.LoadChurn, Sessions: n, Keys: max(n/10, 1)},
					Estimate: planEstimate(n, most, churnWarmup+c.MinWindow+5*time.Second),
					Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
						return runChurn(ctx, env, c, n)
					},
				})
			}
			return vs
		},
	}
}

// scaleMetrics declares the scale scenario's figures.
var scaleMetrics = func() []results.MetricSpec {
	lower, higher := results.BetterLower, results.BetterHigher
	return []results.MetricSpec{
		{Name: "sessions_reached", Unit: "count", Better: higher, Label: "sessions held", Kind: results.KindCount, Key: true},
		{Name: "sessions", Unit: "count", Label: "sessions opened", Kind: results.KindParameter},
		{Name: "server_bytes_per_session", Unit: "bytes", Better: lower, Label: "server memory per session", Kind: results.KindBytes, Key: true},
		{Name: "server_total_bytes_per_session", Unit: "bytes", Label: "server memory per session, whole process", Kind: results.KindBytes},
		{Name: "server_bytes_per_session_slope", Unit: "bytes", Label: "server memory per session, slope while opening", Kind: results.KindBytes},
		{Name: "server_bytes_slope_r2", Unit: "ratio", Label: "R² of the memory slope", Kind: results.KindRatio},
		{Name: "client_bytes_per_lock", Unit: "bytes", Better: lower, Label: "client memory per lock", Kind: results.KindBytes},
		{Name: "server_cpu_ms_per_sec", Unit: "ms/s", Better: lower, Label: "coordinator CPU", Kind: results.KindCPU, Key: true},
		{Name: "bench_cpu_ms_per_sec", Unit: "ms/s", Better: lower, Label: "bench CPU", Kind: results.KindCPU},
		{Name: "server_ops_per_sec", Unit: "1/s", Better: lower, Label: "coordinator commands/s", Kind: results.KindRate},
		{Name: "heartbeats_per_sec", Unit: "1/s", Better: lower, Label: "keep-alives/s", Kind: results.KindRate},
		{Name: "server_cpu_us_per_heartbeat", Unit: "us", Label: "coordinator CPU per keep-alive", Kind: results.KindCPU},
		{Name: "open_seconds", Unit: "s", Label: "time to open the sessions", Kind: results.KindParameter},
		{Name: "depth", Unit: "count", Label: "waiters queued", Kind: results.KindParameter},
		{Name: "queue_fill_ms", Unit: "ms", Better: lower, Label: "time until all waiters were queued", Kind: results.KindLatency},
		{Name: "waiting_ops_per_sec", Unit: "1/s", Better: lower, Label: "coordinator commands/s of the waiting", Kind: results.KindRate, Key: true},
		{Name: "promotion_p50", Unit: "us", Better: lower, Label: "promotion p50", Kind: results.KindLatency, Key: true},
		{Name: "promotion_p99", Unit: "us", Better: lower, Label: "promotion p99", Kind: results.KindLatency},
		{Name: "promotions", Unit: "count", Label: "promotions sampled", Kind: results.KindCount},
		{Name: "saturated", Unit: "count", Label: "coordinator saturated (1 = yes)", Kind: results.KindVerdict},
		{Name: "grants_per_sec", Unit: "1/s", Better: higher, Label: "grants per second", Kind: results.KindRate},
		{Name: "wait_p50", Unit: "ms", Better: lower, Label: "wait p50", Kind: results.KindLatency},
		{Name: "wait_p99", Unit: "ms", Better: lower, Label: "wait p99", Kind: results.KindLatency},
		{Name: "server_cpu_ms_per_1k", Unit: "ms", Better: lower, Label: "coordinator CPU per 1,000 locks", Kind: results.KindCPU},
		{Name: "failures", Unit: "count", Better: lower, Label: "failed cycles", Kind: results.KindCount},
	}
}()

func names(ns []int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = countName(n)
	}
	return out
}

// scaleState carries what one variant learns for later ones: the depth at
// which a contender's polling queue saturated its coordinator.
type scaleState struct {
	mu        sync.Mutex
	saturated map[string]string // contender → reason
}

// setup is what every scale variant prepares: limits, the port plan, the
// dialer, fresh servers and an open Locker.
type setup struct {
	c       int
	locker  bench.Locker
	probe   bench.Coordinator
	limits  []bench.FileLimits
	plan    spreaddial.Plan
	counts  map[string]int64
	notes   []string
	lease   time.Duration
	readers []bench.FootprintReader // nil when a server's memory is unreadable
}

func (s *setup) close() {
	if s.locker != nil {
		s.locker.Close()
	}
	if s.probe != nil {
		s.probe.Close()
	}
}

// errSkip carries the reason a variant is not measured for a contender.
type errSkip struct{ reason string }

func (e errSkip) Error() string { return e.reason }

// skipped turns an errSkip into the record that says why; other errors
// stay errors.
func skipped(err error, counts map[string]int64) (results.Raw, error) {
	var s errSkip
	if errors.As(err, &s) {
		return results.Raw{Skipped: s.reason, Counts: counts}, nil
	}
	return results.Raw{}, err
}

// prepare checks the limits for c sessions (MaxSessions: as many as fit),
// plans the addresses, restarts the servers and opens the Locker.
func prepare(ctx context.Context, env *bench.Env, cfg ScaleConfig, c int, lease time.Duration) (*setup, error) {
	s := &setup{c: c, counts: map[string]int64{}, lease: lease}
	benchLimits, err := host.RaiseFileLimit()
	if err != nil {
		s.notes = append(s.notes, err.Error())
	}
	s.limits = append(s.limits, benchLimits)
	for _, srv := range env.Servers {
		lr, ok := srv.(bench.LimitReader)
		if !ok {
			continue
		}
		l, err := lr.FileLimits(ctx)
		if err != nil {
			s.notes = append(s.notes, fmt.Sprintf("open-file limit of %s unreadable: %v", srv.Name(), err))
			continue
		}
		s.limits = append(s.limits, l)
	}
	for i, l := range s.limits {
		k := "nofile_" + map[bool]string{true: "bench", false: "server" + strconv.Itoa(i)}[i == 0]
		s.counts[k+"_soft"], s.counts[k+"_hard"], s.counts[k+"_in_use"] = int64(l.Soft), int64(l.Hard), int64(l.InUse)
	}
	most := math.MaxInt
	for _, l := range s.limits {
		most = min(most, l.MaxSessions(1, sessions.DefaultReserve))
	}
	s.counts["max_sessions"] = int64(most)
	if c == MaxSessions {
		// As many as fit, but no more than the largest count asked for:
		// a machine without tight limits runs idle-max at that count.
		s.c = min(most, slices.Max(append([]int{1}, cfg.Idle...)))
	}
	for _, l := range s.limits {
		if err := l.Check(s.c, 1, sessions.DefaultReserve); err != nil {
			return s, errSkip{err.Error()}
		}
	}
	if most := env.Contender.MaxClaims; most > 0 && s.c > most {
		s.counts["max_claims"] = int64(most)
		return s, errSkip{fmt.Sprintf("%d sessions exceed the %d claims one %s Locker can have at once: %s", s.c, most, env.Contender.Name, env.Contender.MaxClaimsReason)}
	}
	s.counts["sessions"] = int64(s.c)
	// Restart before the Locker opens: a pool dialled before would hold
	// connections to the killed process.
	if cfg.reuse {
		s.notes = append(s.notes, "servers not restarted (quick run): the empty baseline is the server as the previous variant left it")
	} else if err := restart(ctx, env.Servers); errors.Is(err, bench.ErrNotSupported) {
		s.notes = append(s.notes, "servers not restarted: "+err.Error())
	} else if err != nil {
		return s, fmt.Errorf("restarting the servers for a fresh start: %w", err)
	}
	if err := s.dial(ctx, env, cfg); err != nil {
		return s, err
	}
	for _, srv := range env.Servers {
		r, ok := srv.(bench.FootprintReader)
		if !ok {
			s.readers = nil
			break
		}
		s.readers = append(s.readers, r)
	}
	if s.probe, err = openCoordinator(env); err != nil {
		return s, err
	}
	return s, nil
}

// restart kills servers and starts them again, all at once (five Redlock
// masters in parallel): a fresh process is all the scenario needs, and a
// kill spares the shutdown a server may stretch while clients are
// connected.
func restart(ctx context.Context, servers []bench.Server) error {
	return errors.Join(onEach(servers, func(s bench.Server) error {
		if err := s.Kill(ctx); err != nil {
			return err
		}
		return s.Restart(ctx)
	})...)
}

// dial plans the sessions' connections over address pairs and opens the
// Locker with a spreading Dialer when more than one pair is needed.
func (s *setup) dial(ctx context.Context, env *bench.Env, cfg ScaleConfig) error {
	ports, err := spreaddial.ReadPortRange()
	if err != nil {
		return err
	}
	perPair := cfg.ConnsPerPair
	if perPair <= 0 {
		perPair = ports.Usable()
	}
	pairs := max(1, (s.c+perPair-1)/perPair)
	s.counts["port_range_low"], s.counts["port_range_high"] = int64(ports.Low), int64(ports.High)
	s.counts["conns_per_pair"], s.counts["address_pairs"] = int64(perPair), int64(pairs)
	var d *spreaddial.Dialer
	if pairs > 1 {
		if d, err = spreadFor(ctx, env, pairs); err != nil {
			return err
		}
	}
	s.plan = spreaddial.NewPlan(s.c, ports, d)
	s.counts["source_addresses"], s.counts["destination_addresses"] = int64(s.plan.Sources), int64(s.plan.Destinations)
	switch {
	case d == nil:
		s.locker, err = env.Contender.Open(ctx, env.Addrs, s.lease)
	case env.Contender.OpenWith == nil:
		return errSkip{fmt.Sprintf("%d sessions need %d address pairs, and contender %s takes no dialer (Contender.OpenWith)", s.c, pairs, env.Contender.Name)}
	default:
		s.locker, err = env.Contender.OpenWith(ctx, env.Addrs, s.lease, bench.OpenOptions{Dialer: d})
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", env.Contender.Name, err)
	}
	return nil
}

// spreadFor returns a Dialer over pairs address pairs to env's servers:
// loopback sources for servers on loopback, else extra destination
// addresses of a single server that can have them.
func spreadFor(ctx context.Context, env *bench.Env, pairs int) (*spreaddial.Dialer, error) {
	loopback := true
	for _, a := range env.Addrs {
		ap, err := netip.ParseAddrPort(a)
		loopback = loopback && err == nil && ap.Addr().IsLoopback()
	}
	if loopback {
		src, err := spreaddial.Loopback(pairs + 1)
		if err != nil {
			return nil, errSkip{err.Error()}
		}
		return &spreaddial.Dialer{Sources: src[1:], Timeout: 10 * time.Second}, nil
	}
	if len(env.Servers) != 1 {
		return nil, errSkip{fmt.Sprintf("%d connections per address pair are exceeded and %d servers cannot share extra destination addresses", pairs, len(env.Servers))}
	}
	mh, ok := env.Servers[0].(bench.Multihomed)
	if !ok {
		return nil, errSkip{fmt.Sprintf("the sessions need %d address pairs and the backend cannot give %s more addresses", pairs, env.Servers[0].Name())}
	}
	dst, err := mh.Destinations(ctx, pairs)
	if err != nil {
		return nil, fmt.Errorf("extra addresses for %s: %w", env.Servers[0].Name(), err)
	}
	return &spreaddial.Dialer{Destinations: dst, Timeout: 10 * time.Second}, nil
}

// memory sums the servers' anonymous and total memory; ok is false when a
// server's memory cannot be read.
func (s *setup) memory(ctx context.Context) (anon, total float64, ok bool, err error) {
	if len(s.readers) == 0 {
		return 0, 0, false, nil
	}
	for _, r := range s.readers {
		m, err := r.Footprint(ctx)
		if err != nil {
			return 0, 0, false, err
		}
		anon += float64(m.Anon)
		total += float64(m.Total)
	}
	return anon, total, true, nil
}

// clientMemory is the bench's live Go heap and stacks after a collection.
func clientMemory() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc + m.StackInuse)
}

// reading is the coordinator's counters and CPU at one moment.
type reading struct {
	at     time.Time
	counts bench.Counts
	cpu    time.Duration
	cpuOK  bool
	source string
	self   time.Duration // the bench process's CPU: the load generator's share
}

func (s *setup) read(ctx context.Context, env *bench.Env) (reading, error) {
	r := reading{at: time.Now()}
	var err error
	if r.self, err = host.SelfCPU(); err != nil {
		return r, err
	}
	if s.probe != nil {
		if r.counts, err = s.probe.Counts(ctx); err != nil {
			return r, err
		}
	}
	r.cpu, r.source, r.cpuOK, err = env.ServerCPU(ctx)
	return r, err
}

// load appends the window's coordinator figures: CPU per second, commands
// and keep-alives per second, and the bench's own CPU (the clients share
// the machine's cores with the servers).
func (s *setup) load(raw *results.Raw, a, b reading) {
	secs := b.at.Sub(a.at).Seconds()
	raw.Seconds = secs
	self := float64(b.self-a.self) / 1e6
	raw.Metrics = append(raw.Metrics, results.Metric{Name: "bench_cpu_ms_per_sec", Unit: "ms/s", Value: self / secs})
	if a.cpuOK && b.cpuOK {
		cpu := b.cpu - a.cpu
		raw.CPU = &results.CPU{ServerMS: float64(cpu) / 1e6, ServerSource: b.source, ClientMS: self}
		raw.Metrics = append(raw.Metrics, results.Metric{Name: "server_cpu_ms_per_sec", Unit: "ms/s", Value: float64(cpu) / 1e6 / secs})
	}
	if s.probe != nil {
		ops, ka := b.counts.Commands-a.counts.Commands, b.counts.KeepAlives-a.counts.KeepAlives
		raw.Metrics = append(raw.Metrics,
			results.Metric{Name: "server_ops_per_sec", Unit: "1/s", Value: float64(ops) / secs},
			results.Metric{Name: "heartbeats_per_sec", Unit: "1/s", Value: float64(ka) / secs})
		if ka > 0 && a.cpuOK && b.cpuOK && b.cpu > a.cpu {
			raw.Metrics = append(raw.Metrics, results.Metric{Name: "server_cpu_us_per_heartbeat", Unit: "us", Value: float64(b.cpu-a.cpu) / 1e3 / float64(ka)})
		}
	}
}

// record starts the repetition's record with the setup's counts, limits
// and notes.
func (s *setup) record() results.Raw {
	raw := results.Raw{Counts: s.counts}
	for _, n := range s.notes {
		raw.Errors = noteError(raw.Errors, n)
	}
	return raw
}

// memorySampler samples the servers' memory against the sessions held
// (or queued) while they open, for the slope.
type memorySampler struct {
	held   atomic.Int64 // sessions held or queued, at the last progress
	mu     sync.Mutex
	points []sessions.Point
	err    error
}

func (m *memorySampler) run(ctx context.Context, s *setup) {
	t := time.NewTicker(memoryEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n := m.held.Load()
		anon, _, ok, err := s.memory(ctx)
		m.mu.Lock()
		if err != nil && ctx.Err() == nil {
			m.err = err
		}
		if ok && err == nil {
			m.points = append(m.points, sessions.Point{X: float64(n), Y: anon})
		}
		m.mu.Unlock()
	}
}

// openSessions opens cfg's sessions on s's Locker while sampling memory;
// on failure the error says how many were held.
func (s *setup) openSessions(ctx context.Context, cfg sessions.Config) (*sessions.Set, *memorySampler, error) {
	smp := &memorySampler{}
	cfg.Locker = s.locker
	cfg.Progress = func(p sessions.Progress) { smp.held.Store(int64(p.Held + p.Queued)) }
	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { smp.run(sctx, s) })
	set, err := sessions.Open(ctx, cfg)
	stop()
	wg.Wait()
	if err != nil {
		return nil, smp, err
	}
	return set, smp, nil
}

// reached is the record of a variant whose sessions could not all open:
// how many did, and why not more.
func (s *setup) reached(smp *memorySampler, err error) (results.Raw, error) {
	if errors.Is(err, context.Canceled) {
		return results.Raw{}, err
	}
	raw := s.record()
	// At most C: the server's waiting counter may still count waiters an
	// earlier variant left.
	n := min(smp.held.Load(), int64(s.c))
	raw.Metrics = []results.Metric{{Name: "sessions_reached", Unit: "count", Value: float64(n)}}
	raw.Skipped = fmt.Sprintf("opened %d of %d sessions: %v", n, s.c, err)
	return raw, nil
}

// timeCapped reports whether err came from the variant's own time cap
// (ctx's deadline) rather than from the run's end (outer).
func timeCapped(outer, ctx context.Context, err error) bool {
	return err != nil && outer.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// overCap is the record of a variant whose time cap ended it after its
// sessions opened, before what: the sessions reached and why no figure
// follows. Any other error stays an error.
func (s *setup) overCap(outer, ctx context.Context, reached int, what string, err error) (results.Raw, error) {
	if !timeCapped(outer, ctx, err) {
		return results.Raw{}, err
	}
	raw := s.record()
	raw.Metrics = []results.Metric{{Name: "sessions_reached", Unit: "count", Value: float64(reached)}}
	raw.Skipped = fmt.Sprintf("all %d sessions opened, but the variant's time cap ended before %s", reached, what)
	return raw, nil
}

func runIdle(outer context.Context, env *bench.Env, cfg ScaleConfig, c int, lease time.Duration) (results.Raw, error) {
	ctx, cancel := context.WithTimeout(outer, cfg.timeout+lease)
	defer cancel()
	s, err := prepare(ctx, env, cfg, c, lease)
	defer s.close()
	if err != nil {
		return skipped(err, s.counts)
	}
	anon0, total0, memOK, err := s.memory(ctx)
	if err != nil {
		return results.Raw{}, err
	}
	client0 := clientMemory()
	set, smp, err := s.openSessions(ctx, sessions.Config{
		Sessions: s.c, Concurrency: cfg.Concurrency, KeyPrefix: "idle-" + randomHex() + "-",
		Ramp: lease / 3,
	})
	if err != nil {
		return s.reached(smp, err)
	}
	defer set.Close(context.WithoutCancel(ctx))
	a, err := s.read(ctx, env)
	if err == nil {
		err = load.Sleep(ctx, cfg.window(lease))
	}
	var b reading
	if err == nil {
		b, err = s.read(ctx, env)
	}
	if err != nil {
		return s.overCap(outer, ctx, s.c, "the measuring window", err)
	}
	held, waiting, ended := set.Counts()
	raw := s.record()
	raw.Counts["held"], raw.Counts["waiting"], raw.Counts["lost"] = int64(held), int64(waiting), int64(ended)
	raw.Metrics = append(raw.Metrics,
		results.Metric{Name: "sessions_reached", Unit: "count", Value: float64(held)},
		results.Metric{Name: "sessions", Unit: "count", Value: float64(s.c)},
		results.Metric{Name: "open_seconds", Unit: "s", Value: set.OpenTime().Seconds()},
	)
	if held == s.c {
		raw.Metrics = append(raw.Metrics, results.Metric{Name: "client_bytes_per_lock", Unit: "bytes", Value: (clientMemory() - client0) / float64(s.c)})
	}
	s.load(&raw, a, b)
	if memOK && s.c >= minMemorySessions {
		// Lost sessions leave memory the server has not returned: it is
		// read and divided per session only while every session is held.
		// The slope stands either way: it is sampled against the sessions
		// held while they opened.
		if held == s.c {
			anon, total, ok, err := s.memory(ctx)
			if err != nil {
				return results.Raw{}, err
			}
			if ok {
				raw.Metrics = append(raw.Metrics,
					results.Metric{Name: "server_bytes_per_session", Unit: "bytes", Value: (anon - anon0) / float64(s.c)},
					results.Metric{Name: "server_total_bytes_per_session", Unit: "bytes", Value: (total - total0) / float64(s.c)})
			}
		}
		smp.mu.Lock()
		pts := append([]sessions.Point{{X: 0, Y: anon0}}, smp.points...)
		smp.mu.Unlock()
		if fit, err := sessions.Fit(pts); err == nil {
			raw.Metrics = append(raw.Metrics,
				results.Metric{Name: "server_bytes_per_session_slope", Unit: "bytes", Value: fit.Slope},
				results.Metric{Name: "server_bytes_slope_r2", Unit: "ratio", Value: fit.R2})
		}
	}
	if held != s.c {
		raw.Errors = noteError(raw.Errors, fmt.Sprintf("%d of %d sessions still held after the window (%d ended): no memory per session or per lock", held, s.c, ended))
	}
	return raw, nil
}

func runQueue(ctx context.Context, env *bench.Env, cfg ScaleConfig, depth int, st *scaleState) (results.Raw, error) {
	st.mu.Lock()
	reason, capped := st.saturated[env.Contender.Name]
	st.mu.Unlock()
	if capped {
		return results.Raw{Skipped: "capped: " + reason}, nil
	}
	outer := ctx
	ctx, cancel := context.WithTimeout(outer, cfg.timeout)
	defer cancel()
	s, err := prepare(ctx, env, cfg, depth+1, cfg.QueueLease)
	defer s.close()
	if err != nil {
		return skipped(err, s.counts)
	}
	anon0, _, memOK, err := s.memory(ctx)
	if err != nil {
		return results.Raw{}, err
	}
	var base int64
	if s.probe != nil {
		c, err := s.probe.Counts(ctx)
		if err != nil {
			return results.Raw{}, err
		}
		base = c.Waiting
	}
	qcfg := sessions.Config{Sessions: depth + 1, Keys: 1, Concurrency: cfg.Concurrency}
	if s.probe != nil {
		qcfg.Queued = func(ctx context.Context) (int, error) {
			c, err := s.probe.Counts(ctx)
			return int(c.Waiting - base), err
		}
	}
	raw := s.record()
	promo := load.NewHistogram()
	first := true
	// Sampling ends after Promotions or when PromotionTime is spent: a
	// polling queue may take long to promote.
	pctx := ctx
	for promo.TotalCount() < int64(cfg.Promotions) {
		qcfg.KeyPrefix = "queue-" + randomHex() + "-"
		set, smp, err := s.openSessions(ctx, qcfg)
		if err != nil {
			return s.reached(smp, err)
		}
		if first {
			first = false
			if err := s.queueLoad(ctx, env, &raw, set, anon0, memOK, cfg.window(cfg.QueueLease)); err != nil {
				set.Close(context.WithoutCancel(ctx))
				return s.overCap(outer, ctx, s.c, "the measuring window", err)
			}
			var stop context.CancelFunc
			pctx, stop = context.WithTimeout(ctx, cfg.PromotionTime)
			defer stop()
		}
		err = promote(pctx, set, promo, cfg.Promotions)
		set.Close(context.WithoutCancel(ctx))
		if pctx.Err() != nil && ctx.Err() == nil {
			raw.Errors = noteError(raw.Errors, fmt.Sprintf("promotion sampling stopped after %v with %d promotions", cfg.PromotionTime, promo.TotalCount()))
			break
		}
		if errors.Is(err, errHolderLost) {
			raw.Counts["holders_lost"]++
			raw.Errors = noteError(raw.Errors, fmt.Sprintf("%v with %d waiters after %d promotions: sampling stopped", err, depth, promo.TotalCount()))
			break
		}
		if timeCapped(outer, ctx, err) {
			raw.Errors = noteError(raw.Errors, fmt.Sprintf("the variant's time cap of %v ended promotion sampling after %d promotions", cfg.timeout, promo.TotalCount()))
			break
		}
		if errors.Is(err, errNoPromotion) {
			raw.Counts["promotion_timeouts"]++
			raw.Errors = noteError(raw.Errors, fmt.Sprintf("%v with %d waiters after %d promotions: sampling stopped", err, depth, promo.TotalCount()))
			break
		}
		if err != nil {
			return results.Raw{}, err
		}
	}
	raw.Metrics = append(raw.Metrics, results.Metric{Name: "promotions", Unit: "count", Value: float64(promo.TotalCount())})
	if promo.TotalCount() > 0 {
		h, err := results.NewHistogram("promotion", "ns", promo)
		if err != nil {
			return results.Raw{}, err
		}
		raw.Histograms = append(raw.Histograms, h)
		raw.Metrics = append(raw.Metrics,
			results.Metric{Name: "promotion_p50", Unit: "us", Value: us(promo.ValueAtQuantile(50))},
			results.Metric{Name: "promotion_p99", Unit: "us", Value: us(promo.ValueAtQuantile(99))},
		)
	}
	for _, m := range raw.Metrics {
		if m.Name == "server_cpu_ms_per_sec" && m.Value >= float64(saturatedCPU)/1e6 {
			st.mu.Lock()
			st.saturated[env.Contender.Name] = fmt.Sprintf("the coordinator saturated at queue-%s (%.0f ms CPU/s with %d polling waiters)", countName(depth), m.Value, depth)
			st.mu.Unlock()
			raw.Metrics = append(raw.Metrics, results.Metric{Name: "saturated", Unit: "count", Value: 1})
		}
	}
	return raw, nil
}

// queueLoad measures the full queue: time to fill it, the memory it takes
// and the load its waiting puts on the coordinator over a window.
func (s *setup) queueLoad(ctx context.Context, env *bench.Env, raw *results.Raw, set *sessions.Set, anon0 float64, memOK bool, window time.Duration) error {
	held, waiting, _ := set.Counts()
	raw.Metrics = append(raw.Metrics,
		results.Metric{Name: "sessions_reached", Unit: "count", Value: float64(held + waiting)},
		results.Metric{Name: "depth", Unit: "count", Value: float64(s.c - 1)},
		results.Metric{Name: "queue_fill_ms", Unit: "ms", Value: float64(set.OpenTime()) / 1e6},
	)
	a, err := s.read(ctx, env)
	if err != nil {
		return err
	}
	if err := load.Sleep(ctx, window); err != nil {
		return err
	}
	b, err := s.read(ctx, env)
	if err != nil {
		return err
	}
	s.load(raw, a, b)
	if s.probe != nil {
		// What the waiting itself costs the coordinator: every command
		// but the sessions' keep-alives (polls, re-queues, ...).
		other := (b.counts.Commands - a.counts.Commands) - (b.counts.KeepAlives - a.counts.KeepAlives)
		raw.Metrics = append(raw.Metrics, results.Metric{Name: "waiting_ops_per_sec", Unit: "1/s", Value: float64(other) / b.at.Sub(a.at).Seconds()})
	}
	if memOK && s.c >= minMemorySessions {
		anon, _, ok, err := s.memory(ctx)
		if err != nil {
			return err
		}
		if ok {
			raw.Metrics = append(raw.Metrics, results.Metric{Name: "server_bytes_per_session", Unit: "bytes", Value: (anon - anon0) / float64(s.c)})
		}
	}
	return nil
}

// promote releases the holder of set's key and times the grant of the
// next session, until no waiter is left or the histogram has want
// samples. Waiters are granted in whatever order the contender grants.
func promote(ctx context.Context, set *sessions.Set, h *hdrhistogram.Histogram, want int) error {
	all := set.Sessions()
	granted := make(chan *sessions.Session, len(all))
	for _, x := range all[1:] {
		go func() {
			select {
			case <-x.Done():
				granted <- x
			case <-ctx.Done():
			}
		}()
	}
	holder := all[0]
	for left := len(all) - 1; left > 0 && h.TotalCount() < int64(want); left-- {
		t0 := time.Now()
		if err := holder.Release(ctx); err != nil {
			// The holder lost its lock before the release (its keep-alive
			// failed under the load): no promotion to time.
			return fmt.Errorf("%w: %w", errHolderLost, err)
		}
		select {
		case next := <-granted:
			if next.Err() != nil {
				return fmt.Errorf("waiter %d: %w", next.Index, next.Err())
			}
			if next.GrantedAt().Before(t0) {
				return fmt.Errorf("%w: waiter %d was granted before the release", errHolderLost, next.Index)
			}
			_ = h.RecordValue(int64(next.GrantedAt().Sub(t0)))
			holder = next
		case <-time.After(promotionTimeout):
			return errNoPromotion
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// errHolderLost: the holder's release failed, its lock was already lost.
var errHolderLost = errors.New("the holder's lock was lost before its release")

// errNoPromotion: no waiter was granted within promotionTimeout of the
// holder's release (polling waiters that keep colliding, a saturated
// coordinator).
var errNoPromotion = fmt.Errorf("no waiter granted within %v of the release", promotionTimeout)

func runChurn(ctx context.Context, env *bench.Env, cfg ScaleConfig, c int) (results.Raw, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	s, err := prepare(ctx, env, cfg, c, cfg.LongLease)
	defer s.close()
	if err != nil {
		return skipped(err, s.counts)
	}
	keys := max(1, c/10)
	prefix := "churn-" + randomHex() + "-"
	var (
		mu       sync.Mutex
		wait     = load.NewHistogram()
		grants   int64
		failures int64
		errs     []string
		counting atomic.Bool
	)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i := range c {
		key := prefix + strconv.Itoa(i%keys)
		wg.Go(func() {
			// Starts spread over the warm-up, as sessions of a fleet.
			if load.Sleep(runCtx, time.Duration(int64(churnWarmup)*int64(i)/int64(c))) != nil {
				return
			}
			for runCtx.Err() == nil {
				start := time.Now()
				h, err := s.locker.Acquire(runCtx, key)
				if err != nil {
					if runCtx.Err() == nil {
						mu.Lock()
						failures++
						errs = noteError(errs, err.Error())
						mu.Unlock()
						_ = load.Sleep(runCtx, failurePause)
					}
					continue
				}
				if counting.Load() {
					mu.Lock()
					grants++
					_ = wait.RecordValue(int64(time.Since(start)))
					mu.Unlock()
				}
				_ = load.Sleep(runCtx, DefaultChurnHold)
				_ = h.Release(context.WithoutCancel(runCtx))
			}
		})
	}
	if err := load.Sleep(ctx, churnWarmup); err != nil {
		return results.Raw{}, err
	}
	a, err := s.read(ctx, env)
	if err != nil {
		return results.Raw{}, err
	}
	counting.Store(true)
	if err := load.Sleep(ctx, cfg.MinWindow); err != nil {
		return results.Raw{}, err
	}
	counting.Store(false)
	b, err := s.read(ctx, env)
	if err != nil {
		return results.Raw{}, err
	}
	stop()
	wg.Wait()
	raw := s.record()
	s.load(&raw, a, b)
	// Under churn the keep-alive counters also count releases (a Redis
	// release is a script too): no heartbeat figure.
	raw.Metrics = slices.DeleteFunc(raw.Metrics, func(m results.Metric) bool {
		return m.Name == "heartbeats_per_sec" || m.Name == "server_cpu_us_per_heartbeat"
	})
	mu.Lock()
	defer mu.Unlock()
	raw.Counts["grants"], raw.Counts["failures"] = grants, failures
	for _, e := range errs {
		raw.Errors = noteError(raw.Errors, e)
	}
	secs := b.at.Sub(a.at).Seconds()
	raw.Metrics = append(raw.Metrics,
		results.Metric{Name: "sessions_reached", Unit: "count", Value: float64(c)},
		results.Metric{Name: "grants_per_sec", Unit: "1/s", Value: float64(grants) / secs},
		results.Metric{Name: "failures", Unit: "count", Value: float64(failures)},
	)
	if grants > 0 {
		h, err := results.NewHistogram("wait", "ns", wait)
		if err != nil {
			return results.Raw{}, err
		}
		raw.Histograms = append(raw.Histograms, h)
		raw.Metrics = append(raw.Metrics,
			results.Metric{Name: "wait_p50", Unit: "ms", Value: float64(wait.ValueAtQuantile(50)) / 1e6},
			results.Metric{Name: "wait_p99", Unit: "ms", Value: float64(wait.ValueAtQuantile(99)) / 1e6},
		)
		if raw.CPU != nil {
			raw.Metrics = append(raw.Metrics, results.Metric{Name: "server_cpu_ms_per_1k", Unit: "ms", Value: raw.CPU.ServerMS * 1000 / float64(grants)})
		}
	}
	return raw, nil
}

// decides are the scale figures of the decision section: sessions held at
// the largest count at each lease, and the load of queued waiters.
// A quick run idles at its own lease; a report shows the leases the run
// has.
func (cfg ScaleConfig) decides() []results.DecisionFigure {
	c, q := cfg.withDefaults(false), cfg.withDefaults(true)
	queue := &results.VariantParams{Load: results.LoadQueue}
	var out []results.DecisionFigure
	var leases []time.Duration
	for _, lease := range []time.Duration{c.LongLease, c.ShortLease, q.LongLease, q.ShortLease} {
		if lease <= 0 || slices.Contains(leases, lease) {
			continue
		}
		leases = append(leases, lease)
		out = append(out, results.DecisionFigure{
			ID: "sessions-lease" + lease.String(), Text: "holds every session at the largest count, lease " + lease.String(),
			Where: &results.VariantParams{Load: results.LoadIdle, Lease: lease.String()}, Metric: "sessions_reached",
			Op: results.AtLeast, Than: results.ClaimBound{Metric: "sessions"},
		})
	}
	return append(out,
		results.DecisionFigure{ID: "waiters-no-load", Text: "queued waiters put no load on the coordinator (commands/s other than keep-alives, deepest queue)", Where: queue, Metric: "waiting_ops_per_sec", Op: results.AtMost},
		results.DecisionFigure{ID: "server-bytes-per-session", Text: "server memory per idle session, largest count", Where: &results.VariantParams{Load: results.LoadIdle, Lease: c.LongLease.String()}, Metric: "server_bytes_per_session"},
	)
}
