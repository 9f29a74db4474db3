// Package scenarios holds the benchmark scenarios as plain bench.Scenario
// values (latency, throughput). cmd/monolock-bench lists them in its
// scenario table; a new scenario is one more function returning a
// bench.Scenario and one more row there.
package scenarios

import (
	"fmt"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// DistinctKey is the key of worker i on distinct keys ("k000", "k001",
// ...), SharedKey the key of worker i on a shared set of n keys ("s000",
// ...). Every key is 4 bytes: the tcp-floor server speaks 4-byte names
// only, and every contender gets the same keys.
func DistinctKey(i int) string  { return fmt.Sprintf("k%03d", i%1000) }
func SharedKey(i, n int) string { return fmt.Sprintf("s%03d", i%n) }

// us converts a histogram value in ns to microseconds.
func us(ns int64) float64 { return float64(ns) / 1e3 }

// baseRaw turns a measurement into a repetition record: counts, the
// acquire and cycle histograms, CPU, errors and a failures metric.
func baseRaw(m bench.Measurement) (results.Raw, error) {
	rec := m.Rec
	acq, err := results.NewHistogram("acquire", "ns", rec.Acquire)
	if err != nil {
		return results.Raw{}, err
	}
	cyc, err := results.NewHistogram("cycle", "ns", rec.Cycle)
	if err != nil {
		return results.Raw{}, err
	}
	raw := results.Raw{
		Seconds: m.Elapsed.Seconds(),
		Counts: map[string]int64{
			"cycles": rec.Cycles, "failures": rec.Failures, "gave_up": rec.GaveUp, "lost": rec.Lost,
			"time_wait_sockets": int64(m.TimeWait),
		},
		Histograms: []results.Histogram{acq, cyc},
		Errors:     rec.Errors,
		Metrics: []results.Metric{
			{Name: "failures", Unit: "count", Value: float64(rec.Failures)},
		},
	}
	source := "unavailable (external server)"
	if m.ServerCPUOK {
		source = m.ServerCPUSource
	}
	raw.CPU = &results.CPU{
		ServerMS:     float64(m.ServerCPU) / float64(time.Millisecond),
		ServerSource: source,
		ClientMS:     float64(m.ClientCPU) / float64(time.Millisecond),
	}
	return raw, nil
}

// noCycles is the error of a repetition in which not a single cycle
// completed, so that no latency can be given.
func noCycles(m bench.Measurement) error {
	return fmt.Errorf("no cycle completed in %v (%d failures): %v", m.Elapsed.Round(time.Millisecond), m.Rec.Failures, m.Rec.Errors)
}
