package scenarios

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
)

// ThroughputConfig are the throughput scenario's parameters. A zero field
// takes its default: Warmup 250ms (quick 75ms), Duration 800ms (quick
// 250ms), DistinctWorkers 1, 4, 16, 64 (quick 1, 16, 64); SharedWorkers 16 on SharedKeys 4.
// The durations fit the suite's time budget (bench/README.md): 52 steps per
// repetition, each also opening and closing the contender.
type ThroughputConfig struct {
	Warmup, Duration time.Duration
	DistinctWorkers  []int
	SharedWorkers    int
	SharedKeys       int
	// RTT is the round trip of the network profile the scenario runs
	// under (0 on loopback). The duration lasts at least
	// windowRTTs round trips and the warm-up warmupRTTs, so that each
	// worker completes enough cycles for a rate: at 30 ms a 250 ms window
	// held 3 cycles of a worker, and the rates of locks needing 2 and 3
	// round trips came out equal.
	RTT time.Duration
}

// windowRTTs and warmupRTTs are the least duration and warm-up of a
// throughput step in round trips of its network: a cycle takes 2–4 of
// them, so a worker completes 25–50 in the window.
const windowRTTs, warmupRTTs = 100, 10

func (c ThroughputConfig) withDefaults(quick bool) ThroughputConfig {
	if c.Warmup <= 0 {
		c.Warmup = 250 * time.Millisecond
		if quick {
			c.Warmup = 75 * time.Millisecond
		}
	}
	if c.Duration <= 0 {
		c.Duration = 800 * time.Millisecond
		if quick {
			c.Duration = 250 * time.Millisecond
		}
	}
	if len(c.DistinctWorkers) == 0 {
		c.DistinctWorkers = []int{1, 4, 16, 64}
		if quick {
			c.DistinctWorkers = []int{1, 16, 64}
		}
	}
	if c.SharedWorkers <= 0 {
		c.SharedWorkers = 16
	}
	if c.SharedKeys <= 0 {
		c.SharedKeys = 4
	}
	c.Warmup = max(c.Warmup, warmupRTTs*c.RTT)
	c.Duration = max(c.Duration, windowRTTs*c.RTT)
	return c
}

// Throughput is the throughput scenario with the default parameters.
func Throughput() bench.Scenario { return ThroughputConfig{}.Scenario() }

// Scenario returns the throughput scenario: short locks (hold 0), W
// workers in a closed loop for a fixed duration on distinct keys
// (distinct-wW) and on a small shared key set (shared-wW); completed cycles
// per second, cycle p99, and server and client CPU per 1,000 locks. Floors
// take part.
func (c ThroughputConfig) Scenario() bench.Scenario {
	tm := results.ThroughputMetrics
	return bench.Scenario{
		Name:    "throughput",
		Title:   "Throughput of short locks",
		Floors:  true,
		Metrics: tm.List(),
		Decides: []results.DecisionFigure{
			{ID: "short-locks-rate", Text: "locks per second, most workers on distinct keys (hold 0)", Where: &results.VariantParams{Load: results.LoadClosed}, Metric: tm.CyclesPerSec.Name, Fail: []results.ClaimGuard{{Metric: tm.Failures.Name, Label: "failed cycles"}}},
			{ID: "short-locks-cpu", Text: "coordinator CPU per 1,000 locks, most workers", Where: &results.VariantParams{Load: results.LoadClosed}, Metric: tm.ServerCPUMsPer1k.Name},
		},
		Settings: func(quick bool) results.Settings {
			p := c.withDefaults(quick)
			return results.Settings{
				"warmup":           p.Warmup.String(),
				"duration":         p.Duration.String(),
				"hold":             "0",
				"distinct_workers": fmt.Sprint(p.DistinctWorkers),
				"shared_workers":   fmt.Sprint(p.SharedWorkers),
				"shared_keys":      fmt.Sprint(p.SharedKeys),
				"window_rule":      fmt.Sprintf("under a network profile the warm-up lasts at least %d and the duration %d of its round trips", warmupRTTs, windowRTTs),
				"cpu":              "server: the contender's server processes; client: the whole bench process (getrusage)",
				"samples":          "cycle percentiles rest on the cycles of the duration (each record's cycles count); " + tailNote,
			}
		},
		Variants: func(quick bool) []bench.Variant {
			p := c.withDefaults(quick)
			var vs []bench.Variant
			for _, n := range p.DistinctWorkers {
				vs = append(vs, throughputVariant("distinct-w"+strconv.Itoa(n), results.VariantParams{Workers: n}, DistinctKey, p.Warmup, p.Duration))
			}
			shared := func(i int) string { return SharedKey(i, p.SharedKeys) }
			vs = append(vs, throughputVariant("shared-w"+strconv.Itoa(p.SharedWorkers), results.VariantParams{Workers: p.SharedWorkers, Keys: p.SharedKeys, Contended: true}, shared, p.Warmup, p.Duration))
			return vs
		},
	}
}

func throughputVariant(name string, params results.VariantParams, key func(int) string, warmup, duration time.Duration) bench.Variant {
	params.Load = results.LoadClosed
	workers := params.Workers
	return bench.Variant{
		Name:      name,
		Contended: params.Contended,
		Params:    params,
		Estimate:  warmup + duration + 100*time.Millisecond, // opening, closing (measured ~70ms)
		Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
			m, err := load.Measure(ctx, env, load.ClosedLoop{
				Workers: workers, Key: key, Warmup: warmup, Duration: duration, Probes: spanProbes,
			})
			if err != nil {
				return results.Raw{}, err
			}
			tm := results.ThroughputMetrics
			raw, err := baseRaw(m, tm.Failures)
			if err != nil {
				return raw, err
			}
			raw.Metrics = append(raw.Metrics,
				tm.CyclesPerSec.Of(float64(m.Rec.Cycles)/m.Elapsed.Seconds()),
				tm.Workers.Of(float64(workers)),
			)
			if m.Rec.Cycles == 0 {
				// A span without a single completed cycle is a measured
				// zero; latency and per-lock CPU are undefined.
				return raw, nil
			}
			c := m.Rec.Cycle
			per1k := func(d time.Duration) float64 {
				return float64(d) / float64(time.Millisecond) * 1000 / float64(m.Rec.Cycles)
			}
			raw.Metrics = append(raw.Metrics,
				tm.CycleP50.Of(us(c.ValueAtQuantile(50))),
				tm.CycleP99.Of(us(c.ValueAtQuantile(99))),
				tm.ClientCPUMsPer1k.Of(per1k(m.ClientCPU)),
			)
			if m.ServerCPUOK {
				raw.Metrics = append(raw.Metrics, tm.ServerCPUMsPer1k.Of(per1k(m.ServerCPU)))
			}
			return raw, nil
		},
	}
}
