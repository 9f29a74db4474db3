package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// LatencyConfig are the latency scenario's parameters. A zero field takes
// its default, which depends on quick: Warmup 2s (quick 300ms), Iterations
// per worker in w1 10000 (quick 1000), IterationsW8 per worker in w8 2500
// (quick 250).
type LatencyConfig struct {
	Warmup       time.Duration
	Iterations   int
	IterationsW8 int
}

func (c LatencyConfig) withDefaults(quick bool) LatencyConfig {
	d := LatencyConfig{Warmup: 2 * time.Second, Iterations: 10000, IterationsW8: 2500}
	if quick {
		d = LatencyConfig{Warmup: 300 * time.Millisecond, Iterations: 1000, IterationsW8: 250}
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
	return c
}

// Latency is the latency scenario with the default parameters.
func Latency() bench.Scenario { return LatencyConfig{}.Scenario() }

// Scenario returns the latency scenario: one worker uncontended (w1) and
// eight workers on distinct keys (w8), a fixed number of acquire → release
// cycles per worker after a warm-up; acquire and cycle latency percentiles
// from HdrHistogram. Floors take part.
func (c LatencyConfig) Scenario() bench.Scenario {
	better := map[string]string{"failures": bench.LowerIsBetter}
	for _, op := range []string{"acquire", "cycle"} {
		for _, q := range []string{"p50", "p90", "p99", "p999", "max"} {
			better[op+"_"+q] = bench.LowerIsBetter
		}
	}
	return bench.Scenario{
		Name:   "latency",
		Floors: true,
		Better: better,
		Settings: func(quick bool) results.Settings {
			p := c.withDefaults(quick)
			return results.Settings{
				"warmup":                p.Warmup.String(),
				"iterations_per_worker": fmt.Sprintf("w1: %d, w8: %d", p.Iterations, p.IterationsW8),
				"hold":                  "0",
				"keys":                  "distinct, one per worker",
				"clock":                 "monotonic clock of the bench process, around the seam",
			}
		},
		Variants: func(quick bool) []bench.Variant {
			p := c.withDefaults(quick)
			return []bench.Variant{
				latencyVariant("w1", 1, p.Iterations, p.Warmup),
				latencyVariant("w8", 8, p.IterationsW8, p.Warmup),
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
			if m.Rec.Cycles == 0 {
				return results.Raw{}, noCycles(m)
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
