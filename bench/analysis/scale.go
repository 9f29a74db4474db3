package analysis

import (
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

const scale = "scale"

// A ScalePoint is one figure of a lock at X sessions (or queue depth):
// the median Y and the repetitions' Lo and Hi.
type ScalePoint struct{ X, Y, Lo, Hi float64 }

// ScaleSeries collects, per lock, the figure metric of the scale
// variants of one load (results.LoadIdle, LoadQueue) at its longest
// lease against the x figure of the same variant, by ascending x.
func (run *Run) ScaleSeries(load string, x, metric results.MetricSpec) map[string][]ScalePoint {
	out := map[string][]ScalePoint{}
	long := run.longestLease(load)
	for _, c := range run.locksIn(scale) {
		for _, v := range run.variants(scale) {
			if p := run.params(scale, v); p.Load != load || p.Lease != long {
				continue
			}
			xr, okx := run.row(scale, c, v, x.Name)
			y, oky := run.row(scale, c, v, metric.Name)
			if !okx || !oky || xr.Median <= 0 {
				continue
			}
			out[c] = append(out[c], ScalePoint{xr.Median, y.Median, y.Min, y.Max})
		}
		slices.SortFunc(out[c], func(a, b ScalePoint) int { return int(a.X - b.X) })
	}
	return out
}

// longestLease returns the longest lease among the scale variants of a
// load, as recorded ("30s"); "" when none records one.
func (run *Run) longestLease(load string) string {
	best, bestD := "", time.Duration(-1)
	for _, v := range run.variants(scale) {
		p := run.params(scale, v)
		d, err := time.ParseDuration(p.Lease)
		if p.Load == load && err == nil && d > bestD {
			best, bestD = p.Lease, d
		}
	}
	return best
}

// A ScaleSlope is what a lock's idle holders at the long lease cost per
// session, for extrapolating: the memory over Counts session counts
// (fitted when two or more, else the one count's figure at AtSessions),
// and the CPU's slope when it could be fitted.
type ScaleSlope struct {
	Contender string
	// Counts is the number of session counts with a memory figure; none
	// when 0.
	Counts                      int
	BytesPerSession, AtSessions float64
	MemoryFitted                bool
	// CPUPer1k is the CPU in ms/s per 1,000 sessions and CPUAt100k the
	// CPU the fit gives 100,000 sessions, when CPUFitted.
	CPUPer1k, CPUAt100k float64
	CPUFitted           bool
}

// ScaleSlopes fits the memory and CPU of each lock's idle holders at
// the long lease against their count, in the order of locksIn.
func (run *Run) ScaleSlopes() []ScaleSlope {
	sm := results.ScaleMetrics
	mems := run.ScaleSeries(results.LoadIdle, sm.Sessions, sm.ServerBytesPerSession)
	cpus := run.ScaleSeries(results.LoadIdle, sm.Sessions, sm.ServerCPUMsPerSec)
	var out []ScaleSlope
	for _, c := range run.locksIn(scale) {
		s := ScaleSlope{Contender: c, Counts: len(mems[c])}
		if mem := mems[c]; len(mem) > 0 {
			// Total bytes against C: the slope is the bytes per session.
			total := make([]ScalePoint, len(mem))
			for i, p := range mem {
				total[i] = ScalePoint{X: p.X, Y: p.Y * p.X}
			}
			if l, ok := fitLine(total); ok {
				s.BytesPerSession, s.MemoryFitted = l.b, true
			} else {
				s.BytesPerSession, s.AtSessions = mem[0].Y, mem[0].X
			}
		}
		if l, ok := fitLine(cpus[c]); ok {
			s.CPUPer1k, s.CPUAt100k, s.CPUFitted = l.b*1000, l.a+l.b*100000, true
		}
		out = append(out, s)
	}
	return out
}

// line is a least-squares fit y = a + b·x.
type line struct{ a, b float64 }

func fitLine(pts []ScalePoint) (line, bool) {
	if len(pts) < 2 {
		return line{}, false
	}
	var mx, my float64
	for _, p := range pts {
		mx += p.X
		my += p.Y
	}
	n := float64(len(pts))
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for _, p := range pts {
		sxx += (p.X - mx) * (p.X - mx)
		sxy += (p.X - mx) * (p.Y - my)
	}
	if sxx == 0 {
		return line{}, false
	}
	b := sxy / sxx
	return line{my - b*mx, b}, true
}

// A ShortLease is an idle scale variant at a lease shorter than the
// longest, with each lock's sessions held of those opened and what the
// keep-alives cost.
type ShortLease struct {
	Variant string
	Locks   []ShortLeaseLock
}

// ShortLeaseLock is one lock's figures in a short-lease variant; a nil
// figure was not measured (the per-keep-alive ones come as a pair).
type ShortLeaseLock struct {
	Contender                             string
	Held, Opened                          results.Row
	ServerCPU, BenchCPU                   *results.Row
	ServerPerKeepAlive, BenchPerKeepAlive *results.Row
}

// ScaleShortLeases reads the idle variants at a short lease, in order of
// first appearance, leaving out those no lock has figures in.
func (run *Run) ScaleShortLeases() []ShortLease {
	sm := results.ScaleMetrics
	var out []ShortLease
	for _, v := range run.variants(scale) {
		if p := run.params(scale, v); p.Load != results.LoadIdle || p.Lease == run.longestLease(results.LoadIdle) {
			continue
		}
		sl := ShortLease{Variant: v}
		for _, c := range run.locksIn(scale) {
			get := func(m results.MetricSpec) *results.Row {
				if x, ok := run.row(scale, c, v, m.Name); ok {
					return &x
				}
				return nil
			}
			held, all := get(sm.SessionsReached), get(sm.Sessions)
			if held == nil || all == nil {
				continue
			}
			l := ShortLeaseLock{Contender: c, Held: *held, Opened: *all, ServerCPU: get(sm.ServerCPUMsPerSec), BenchCPU: get(sm.BenchCPUMsPerSec)}
			if srv, cli := get(sm.ServerCPUUsPerHeartbeat), get(sm.ClientCPUUsPerHeartbeat); srv != nil && cli != nil {
				l.ServerPerKeepAlive, l.BenchPerKeepAlive = srv, cli
			}
			sl.Locks = append(sl.Locks, l)
		}
		if len(sl.Locks) > 0 {
			out = append(out, sl)
		}
	}
	return out
}

// A QueueReading is the scale scenario at its deepest queue: the
// commands/s beyond keep-alives of the waiting, the promotion p50
// ranked fastest first, and each lock's promotion there against depth 1.
type QueueReading struct {
	// Variant is "" when no queue variant ran.
	Variant    string
	Depth      float64
	Waiting    []Quoted
	Promotion  []Entry
	Promotions []PromotionRatio
}

// A PromotionRatio is a lock's promotion p50 at its deepest measured
// queue (Deepest waiters) and at depth 1.
type PromotionRatio struct {
	Contender        string
	Deepest          float64
	AtDepth, AtFirst float64
}

// ScaleQueue reads the deepest queue any lock measured.
func (run *Run) ScaleQueue() QueueReading {
	sm := results.ScaleMetrics
	var q QueueReading
	locks := run.locksIn(scale)
	for _, v := range run.variants(scale) {
		if run.params(scale, v).Load != results.LoadQueue {
			continue
		}
		for _, c := range locks {
			if x, ok := run.row(scale, c, v, sm.Depth.Name); ok && x.Median > q.Depth {
				q.Variant, q.Depth = v, x.Median
			}
		}
	}
	if q.Variant == "" {
		return q
	}
	q.Waiting = run.Quote(scale, q.Variant, sm.WaitingOpsPerSec.Name, locks)
	q.Promotion = run.RankFigure(scale, q.Variant, sm.PromotionP50.Name, locks, false)
	for c, pts := range run.ScaleSeries(results.LoadQueue, sm.Depth, sm.PromotionP50) {
		if len(pts) > 1 && pts[0].X == 1 && pts[0].Y > 0 {
			last := pts[len(pts)-1]
			q.Promotions = append(q.Promotions, PromotionRatio{Contender: c, Deepest: last.X, AtDepth: last.Y, AtFirst: pts[0].Y})
		}
	}
	return q
}

// ScaleLimits are the limits the scale scenario's run recorded.
type ScaleLimits struct {
	NofileBenchSoft, NofileBenchHard, NofileServerSoft int64
	MaxSessions, PortLow, PortHigh, ConnsPerPair       int64
}

// Limits returns the limits of the first scale record that has them;
// false when none has.
func (run *Run) Limits() (ScaleLimits, bool) {
	for _, x := range run.r.Raw {
		if x.Scenario != scale || x.Counts["nofile_bench_soft"] <= 0 {
			continue
		}
		c := x.Counts
		return ScaleLimits{c["nofile_bench_soft"], c["nofile_bench_hard"], c["nofile_server1_soft"], c["max_sessions"], c["port_range_low"], c["port_range_high"], c["conns_per_pair"]}, true
	}
	return ScaleLimits{}, false
}
