package scenarios

// The scale scenario's configuration, defaults and variant naming and ETA.

import (
	"math"
	"os"
	"strconv"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/load/sessions"
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
	// for idle-max. Default 1k, 10k, max, 50k, 100k; quick 1k.
	Idle []int
	// LongLease names the variants idle-<C> (default 30s), ShortLease the
	// variants idle-<C>-lease2s (default 2s; not in quick). A zero
	// ShortLease in a config with Idle set runs the long lease only.
	LongLease, ShortLease time.Duration
	// Queue are the depths of the queue variants (waiters behind one
	// holder). Default 1, 1k, 10k; quick 1k (one waiter's promotion is
	// the graceful handover, which the quick suite measures).
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
	// Workers, when above 0, adds the sharded variant idle-<C>-workers<N>:
	// ShardedSessions idle holders at ShardedLease opened by Workers
	// worker processes where the deployment runs them (skipped
	// elsewhere). Default 0: no sharded variant.
	Workers int
	// ShardedSessions is the sharded variant's C; default 10k, quick 2k.
	ShardedSessions int
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
			// idle-10k left the quick suite over its 6 minutes once the
			// Redisson waiters got a window of a whole lease; the full run
			// measures it.
			c.Idle = []int{1000}
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
			c.Queue = []int{1000}
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
	if c.ShardedSessions <= 0 {
		c.ShardedSessions = 10000
		if quick {
			c.ShardedSessions = 2000
		}
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
	return periods(lease, c.MinWindow)
}

// periods is the shortest whole number (at least one) of lease/4 periods
// that lasts d.
func periods(lease, d time.Duration) time.Duration {
	q := lease / 4
	n := max(1, int(math.Ceil(float64(d)/float64(q))))
	return time.Duration(n) * q
}

// queueWindow is the queue variants' window for contender ct: the idle
// window at the queue lease, or, for a contender whose waiters may go
// without a try for a while (WaitRetry), whole lease/4 periods that last
// that long, so that every waiter's retry falls inside it.
func (c ScaleConfig) queueWindow(ct bench.Contender) time.Duration {
	w := c.window(c.QueueLease)
	if ct.WaitRetry != nil {
		w = max(w, periods(c.QueueLease, ct.WaitRetry(c.QueueLease)))
	}
	return w
}

// openCost is the ETA's cost of opening n sessions: ~0.5ms per session
// on 2 cores averaged over the contenders (the full run 20261201T002715Z:
// 10k took monolock and redis under a second beyond the window, redlock
// 3s, etcd 34s). A short lease no longer costs more: in the full run
// 20261207T145127Z idle-max-lease2s (19,734 sessions) took 4.4–7.3 s a
// step in all, and idle-10k-lease2s 4.2–6.7 s, waits included.
func openCost(n int) time.Duration {
	return time.Duration(n) * time.Millisecond / 2
}

// stepOverhead is the ETA's cost of a scale step besides its waits and
// opening: restarting the servers (not in quick runs), reading counters,
// closing the sessions (measured: ~1s for monolock and redis, more for
// etcd; quick idle-1k steps 3.5s for a 3.5s wait).
func (c ScaleConfig) stepOverhead() time.Duration {
	if c.reuse {
		return 300 * time.Millisecond
	}
	return 2 * time.Second
}

// planEstimate is a variant's ETA estimate: est, or nothing when its
// sessions exceed what the bench's own open-file limit allows (most), as
// the variant then skips at once.
func planEstimate(n, most int, est time.Duration) time.Duration {
	if n > most {
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
