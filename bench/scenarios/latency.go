package scenarios

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
	"golang.org/x/perf/benchmath"
)

// LatencyConfig are the latency scenario's parameters. A zero field takes
// its default, which depends on quick: Blocks 10 (quick 4), Warmup before
// every block 50ms (quick 20ms), Iterations per worker in w1 1600 (quick
// 320) and IterationsW8 per worker in w8 200 (quick 64), each split
// evenly over the blocks; OpenLoop as OpenLoopConfig documents.
type LatencyConfig struct {
	Blocks       int
	Warmup       time.Duration
	Iterations   int
	IterationsW8 int
	OpenLoop     OpenLoopConfig
}

func (c LatencyConfig) withDefaults(quick bool) LatencyConfig {
	// Sized to the suite's time budget (bench/README.md, budgets; etcd's
	// cycles take most of it): a full record's percentiles rest on 1,600
	// cycles (w1: 1,600 of one worker, w8: 200 of each of eight), so its
	// p99.9 has one or two samples above it; 10 blocks give the median an
	// interval of x(2)…x(9), ≥97%.
	d := LatencyConfig{Blocks: 10, Warmup: 50 * time.Millisecond, Iterations: 1600, IterationsW8: 200}
	if quick {
		d = LatencyConfig{Blocks: 4, Warmup: 20 * time.Millisecond, Iterations: 320, IterationsW8: 64}
	}
	if c.Blocks <= 0 {
		c.Blocks = d.Blocks
	}
	if c.Warmup <= 0 {
		c.Warmup = d.Warmup
	}
	if c.Iterations <= 0 {
		c.Iterations = d.Iterations
	}
	if c.IterationsW8 <= 0 {
		c.IterationsW8 = d.IterationsW8
	}
	c.OpenLoop = c.OpenLoop.withDefaults(quick)
	return c
}

// Latency is the latency scenario with the default parameters.
func Latency() bench.Scenario { return LatencyConfig{}.Scenario() }

// Scenario returns the latency scenario: one worker uncontended (w1) and
// eight workers on distinct keys (w8), a fixed number of acquire → release
// cycles per worker; acquire and cycle latency percentiles from
// HdrHistogram. The contenders alternate in short blocks (A B C, C B A,
// A B C, ...) within a repetition, each block after its own warm-up, so
// that the machine's slow drift (other processes on a shared VM) falls on
// every contender alike instead of on whichever ran during a busy spell;
// each block's median is kept, and their spread gives a confidence
// interval of the median (acquire_p50_ci_lo … _hi). The open-loop
// variants follow (see OpenLoopConfig). Floors take part.
func (c LatencyConfig) Scenario() bench.Scenario {
	return bench.Scenario{
		Name:    "latency",
		Title:   "Latency (uncontended)",
		Floors:  true,
		Metrics: results.LatencyMetrics.List(),
		Decides: []results.DecisionFigure{
			{ID: "acquire-p50", Text: "uncontended acquire p50, one worker", Variant: "w1", Metric: results.LatencyMetrics.AcquireP50.Name},
			{ID: "acquire-p99", Text: "uncontended acquire p99, one worker", Variant: "w1", Metric: results.LatencyMetrics.AcquireP99.Name},
		},
		Settings: func(quick bool) results.Settings {
			p := c.withDefaults(quick)
			w1, w8 := p.Blocks*max(p.Iterations/p.Blocks, 1), p.Blocks*max(p.IterationsW8/p.Blocks, 1)
			set := results.Settings{
				"warmup":                p.Warmup.String() + " before every block",
				"blocks":                fmt.Sprintf("%d per contender, contenders alternating (A B C, C B A, ...) within each repetition; every block opens the contender afresh", p.Blocks),
				"iterations_per_worker": fmt.Sprintf("w1: %d, w8: %d (split evenly over the blocks)", w1, w8),
				"samples":               fmt.Sprintf("a record's percentiles rest on its cycles: w1 %d, w8 %d (8 × %d); %s", w1, 8*w8, w8, tailNote),
				"p50_ci":                "distribution-free interval of the median of the per-block medians (order statistics, ≥95% where there are 6 blocks or more)",
				"hold":                  "0",
				"keys":                  "distinct, one per worker",
				"clock":                 "monotonic clock of the bench process, around the seam",
			}
			p.OpenLoop.settings(set)
			return set
		},
		Variants: func(quick bool) []bench.Variant {
			p := c.withDefaults(quick)
			return append([]bench.Variant{
				latencyVariant("w1", 1, p.Iterations, p.Blocks, p.Warmup),
				latencyVariant("w8", 8, p.IterationsW8, p.Blocks, p.Warmup),
			}, p.OpenLoop.variants()...)
		},
	}
}

// tailNote says what a tail percentile rests on.
const tailNote = "p99 is the value with 1% of them above it, p99.9 with 0.1%: from fewer than 1,000 samples the p99.9 is close to the maximum, and from fewer than 100 the p99 is"

func latencyVariant(name string, workers, iterations, blocks int, warmup time.Duration) bench.Variant {
	per := max(iterations/blocks, 1)
	return bench.Variant{
		Name:   name,
		Params: results.VariantParams{Workers: workers, Load: results.LoadClosed},
		// Per contender: opening and closing (~60ms) and the warm-up in
		// every block, plus ~0.3ms per cycle of one worker (the workers
		// run theirs at once), averaged over the table: the full run
		// 20261201T002715Z took 1.6s per contender and repetition for w1
		// (1,600 cycles) and 1.2s for w8 (200 per worker).
		Estimate: time.Duration(blocks)*(warmup+60*time.Millisecond) + time.Duration(blocks*per)*300*time.Microsecond,
		Interleaved: func(ctx context.Context, envs []*bench.Env) ([]results.Raw, []error) {
			ms := make([][]load.Measurement, len(envs))
			errs := make([]error, len(envs))
			for b := range blocks {
				for _, i := range blockOrder(len(envs), b) {
					if errs[i] != nil {
						continue // a contender that failed sits out the rest
					}
					m, err := load.Measure(ctx, envs[i], load.ClosedLoop{
						Workers: workers, Key: DistinctKey, Warmup: warmup, Cycles: per, Probes: spanProbes,
					})
					if ctx.Err() != nil {
						return nil, nil
					}
					if err == nil && m.Rec.Cycles == 0 {
						err = noCycles(m)
					}
					if err != nil {
						errs[i] = fmt.Errorf("block %d of %d: %w", b+1, blocks, err)
						continue
					}
					ms[i] = append(ms[i], m)
				}
			}
			raws := make([]results.Raw, len(envs))
			for i := range envs {
				if errs[i] == nil {
					raws[i], errs[i] = latencyRaw(ms[i], workers, per)
				}
			}
			return raws, errs
		},
	}
}

// blockOrder is the order of n contenders in block b: forwards in even
// blocks, backwards in odd ones, so that no contender always follows the
// same one or always comes first.
func blockOrder(n, b int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
		if b%2 == 1 {
			order[i] = n - 1 - i
		}
	}
	return order
}

// latencyRaw is a contender's record of a repetition from its blocks: the
// percentiles of all blocks' cycles together, and the per-block medians
// with the confidence interval they give.
func latencyRaw(blocks []load.Measurement, workers, perBlock int) (results.Raw, error) {
	m := mergeMeasurements(blocks)
	lm := results.LatencyMetrics
	raw, err := baseRaw(m, lm.Failures)
	if err != nil {
		return raw, err
	}
	a, c := m.Rec.Acquire, m.Rec.Cycle
	raw.Metrics = append(raw.Metrics,
		lm.AcquireP50.Of(us(a.ValueAtQuantile(50))),
		lm.AcquireP90.Of(us(a.ValueAtQuantile(90))),
		lm.AcquireP99.Of(us(a.ValueAtQuantile(99))),
		lm.AcquireP999.Of(us(a.ValueAtQuantile(99.9))),
		lm.AcquireMax.Of(us(a.Max())),
		lm.CycleP50.Of(us(c.ValueAtQuantile(50))),
		lm.CycleP90.Of(us(c.ValueAtQuantile(90))),
		lm.CycleP99.Of(us(c.ValueAtQuantile(99))),
		lm.CycleP999.Of(us(c.ValueAtQuantile(99.9))),
		lm.CycleMax.Of(us(c.Max())),
		lm.Workers.Of(float64(workers)),
		lm.Blocks.Of(float64(len(blocks))),
	)
	for _, op := range []struct {
		name   string
		lo, hi results.MetricSpec
	}{{"acquire", lm.AcquireP50CILo, lm.AcquireP50CIHi}, {"cycle", lm.CycleP50CILo, lm.CycleP50CIHi}} {
		medians := make([]float64, len(blocks))
		for i, b := range blocks {
			h := b.Rec.Acquire
			if op.name == "cycle" {
				h = b.Rec.Cycle
			}
			medians[i] = us(h.ValueAtQuantile(50))
		}
		raw.Series = append(raw.Series, results.Series{Name: op.name + "_p50_blocks", Unit: "us", Values: medians})
		lo, hi := medianCI(medians)
		raw.Metrics = append(raw.Metrics, op.lo.Of(lo), op.hi.Of(hi))
	}
	raw.Counts["iterations_per_worker"] = int64(perBlock * len(blocks))
	return raw, nil
}

// mergeMeasurements adds up the blocks of one contender: cycles, time and
// CPU; server CPU and the probes' changes (the TCP Fast Open counters)
// only when every block could read them; the probes' levels (TIME_WAIT
// sockets) as the last block left them.
func mergeMeasurements(blocks []load.Measurement) load.Measurement {
	m := load.Measurement{Rec: load.NewRecorder(), ServerCPUOK: true}
	for i, b := range blocks {
		m.Rec.Merge(b.Rec)
		m.Elapsed += b.Elapsed
		m.ClientCPU += b.ClientCPU
		m.ServerCPU += b.ServerCPU
		m.ServerCPUOK = m.ServerCPUOK && b.ServerCPUOK
		m.ServerCPUSource = b.ServerCPUSource
		if i == 0 {
			m.Changes = maps.Clone(b.Changes)
		}
		for k := range m.Changes {
			if v, ok := b.Changes[k]; !ok {
				delete(m.Changes, k)
			} else if i > 0 {
				m.Changes[k] += v
			}
		}
		m.Levels = b.Levels
	}
	return m
}

// medianCI returns the distribution-free 95% interval of the median of the
// population the values were drawn from (benchmath's, as compare uses);
// with too few values for 95% coverage it is the whole range.
func medianCI(values []float64) (lo, hi float64) {
	sample := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(sample, 0.95)
	lo, hi = sum.Lo, sum.Hi
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = sample.Values[0], sample.Values[len(sample.Values)-1]
	}
	return lo, hi
}
