package scenarios

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// Throughput sweep: workers on distinct keys, and one contended run on a
// small shared key set.
var (
	distinctWorkers = []int{1, 4, 16, 64}
	sharedWorkers   = 16
	sharedKeys      = 4
)

func throughputTimes(quick bool) (warmup, duration time.Duration) {
	if quick {
		return 500 * time.Millisecond, 2 * time.Second
	}
	return 2 * time.Second, 10 * time.Second
}

// Throughput is the throughput scenario: short locks (hold 0), W workers
// in a closed loop for a fixed duration on distinct keys (W = 1, 4, 16, 64)
// and on a shared set of 4 keys (W = 16); completed cycles per second,
// cycle p99, and server and client CPU per 1,000 locks. Floors take part.
func Throughput() bench.Scenario {
	return bench.Scenario{
		Name:   "throughput",
		Floors: true,
		Settings: func(quick bool) results.Settings {
			w, d := throughputTimes(quick)
			return results.Settings{
				"warmup":           w.String(),
				"duration":         d.String(),
				"hold":             "0",
				"distinct_workers": fmt.Sprint(distinctWorkers),
				"shared_workers":   fmt.Sprint(sharedWorkers),
				"shared_keys":      fmt.Sprint(sharedKeys),
				"cpu":              "server: the contender's server processes; client: the whole bench process (getrusage)",
			}
		},
		Variants: func(quick bool) []bench.Variant {
			w, d := throughputTimes(quick)
			var vs []bench.Variant
			for _, n := range distinctWorkers {
				vs = append(vs, throughputVariant("distinct-w"+strconv.Itoa(n), n, false, DistinctKey, w, d))
			}
			shared := func(i int) string { return SharedKey(i, sharedKeys) }
			vs = append(vs, throughputVariant("shared-w"+strconv.Itoa(sharedWorkers), sharedWorkers, true, shared, w, d))
			return vs
		},
	}
}

func throughputVariant(name string, workers int, contended bool, key func(int) string, warmup, duration time.Duration) bench.Variant {
	return bench.Variant{
		Name:      name,
		Contended: contended,
		Estimate:  warmup + duration + 300*time.Millisecond,
		Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
			m, err := env.Measure(ctx, bench.Workload{
				Workers: workers, Key: key, Warmup: warmup, Duration: duration,
			})
			if err != nil {
				return results.Raw{}, err
			}
			raw, err := baseRaw(m)
			if err != nil {
				return raw, err
			}
			c := m.Rec.Cycle
			per1k := func(d time.Duration) float64 {
				return float64(d) / float64(time.Millisecond) * 1000 / float64(m.Rec.Cycles)
			}
			raw.Metrics = append(raw.Metrics,
				results.Metric{Name: "cycles_per_sec", Unit: "1/s", Value: float64(m.Rec.Cycles) / m.Elapsed.Seconds()},
				results.Metric{Name: "cycle_p50", Unit: "us", Value: us(c.ValueAtQuantile(50))},
				results.Metric{Name: "cycle_p99", Unit: "us", Value: us(c.ValueAtQuantile(99))},
				results.Metric{Name: "client_cpu_ms_per_1k", Unit: "ms", Value: per1k(m.ClientCPU)},
				results.Metric{Name: "workers", Unit: "count", Value: float64(workers)},
			)
			if m.ServerCPUOK {
				raw.Metrics = append(raw.Metrics, results.Metric{Name: "server_cpu_ms_per_1k", Unit: "ms", Value: per1k(m.ServerCPU)})
			}
			return raw, nil
		},
	}
}
