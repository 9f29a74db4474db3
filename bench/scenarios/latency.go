package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// latencyPlan are the latency scenario's parameters.
type latencyPlan struct {
	warmup      time.Duration
	iterations  int // per worker, w1
	iterationsN int // per worker, w8
}

func latencyParams(quick bool) latencyPlan {
	if quick {
		return latencyPlan{warmup: 300 * time.Millisecond, iterations: 1000, iterationsN: 250}
	}
	return latencyPlan{warmup: 2 * time.Second, iterations: 10000, iterationsN: 2500}
}

// Latency is the latency scenario: one worker uncontended (w1) and eight
// workers on distinct keys (w8), a fixed number of acquire → release cycles
// per worker after a warm-up; acquire and cycle latency percentiles from
// HdrHistogram. Floors take part.
func Latency() bench.Scenario {
	return bench.Scenario{
		Name:   "latency",
		Floors: true,
		Settings: func(quick bool) results.Settings {
			p := latencyParams(quick)
			return results.Settings{
				"warmup":                p.warmup.String(),
				"iterations_per_worker": fmt.Sprintf("w1: %d, w8: %d", p.iterations, p.iterationsN),
				"hold":                  "0",
				"keys":                  "distinct, one per worker",
				"clock":                 "monotonic clock of the bench process, around the seam",
			}
		},
		Variants: func(quick bool) []bench.Variant {
			p := latencyParams(quick)
			return []bench.Variant{
				latencyVariant("w1", 1, p.iterations, p.warmup),
				latencyVariant("w8", 8, p.iterationsN, p.warmup),
			}
		},
	}
}

func latencyVariant(name string, workers, iterations int, warmup time.Duration) bench.Variant {
	return bench.Variant{
		Name: name,
		// ~300µs per cycle on loopback for the slowest contender, plus
		// opening and warm-up.
		Estimate: warmup + time.Duration(iterations)*300*time.Microsecond + 200*time.Millisecond,
		Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
			m, err := env.Measure(ctx, bench.Workload{
				Workers: workers, Key: DistinctKey, Warmup: warmup, Cycles: iterations,
			})
			if err != nil {
				return results.Raw{}, err
			}
			raw, err := baseRaw(m)
			if err != nil {
				return raw, err
			}
			a, c := m.Rec.Acquire, m.Rec.Cycle
			raw.Metrics = append(raw.Metrics,
				results.Metric{Name: "acquire_p50", Unit: "us", Value: us(a.ValueAtQuantile(50))},
				results.Metric{Name: "acquire_p90", Unit: "us", Value: us(a.ValueAtQuantile(90))},
				results.Metric{Name: "acquire_p99", Unit: "us", Value: us(a.ValueAtQuantile(99))},
				results.Metric{Name: "acquire_p999", Unit: "us", Value: us(a.ValueAtQuantile(99.9))},
				results.Metric{Name: "acquire_max", Unit: "us", Value: us(a.Max())},
				results.Metric{Name: "cycle_p50", Unit: "us", Value: us(c.ValueAtQuantile(50))},
				results.Metric{Name: "cycle_p90", Unit: "us", Value: us(c.ValueAtQuantile(90))},
				results.Metric{Name: "cycle_p99", Unit: "us", Value: us(c.ValueAtQuantile(99))},
				results.Metric{Name: "cycle_p999", Unit: "us", Value: us(c.ValueAtQuantile(99.9))},
				results.Metric{Name: "cycle_max", Unit: "us", Value: us(c.Max())},
				results.Metric{Name: "workers", Unit: "count", Value: float64(workers)},
			)
			raw.Counts["iterations_per_worker"] = int64(iterations)
			return raw, nil
		},
	}
}
