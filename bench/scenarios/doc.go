// Package scenarios holds the benchmark scenarios side by side as plain
// bench.Scenario values: latency, throughput, handover, fairness, safety,
// failover, scale and workload (a workload file's traffic), each
// configured by its <Name>Config.
// cmd/monolock-bench lists them in its
// scenario table; a new scenario is one more Config with a Scenario method
// and one more row there. Scenarios know contenders only through the
// bench seam: Locker, servers, coordinator counters.
package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
)

// DistinctKey is the key of worker i on distinct keys ("k000", "k001",
// ...), SharedKey the key of worker i on a shared set of n keys ("s000",
// ...). Every key is 4 bytes: the tcp-floor server speaks 4-byte names
// only, and every contender gets the same keys.
func DistinctKey(i int) string  { return fmt.Sprintf("k%03d", i%1000) }
func SharedKey(i, n int) string { return fmt.Sprintf("s%03d", i%n) }

// spanProbes are the host's counters every closed-loop measurement
// records beside its timings: the sockets left in TIME_WAIT towards the
// contender's servers (a connection-per-claim client keeps one per claim
// for 60s, and they bound how fast it can claim), and the TCP Fast Open
// counters of the bench's namespace (whether claims rode in the SYN),
// when the kernel has them.
var spanProbes = []load.Probe{
	{Read: func(_ context.Context, env *bench.Env) (map[string]int64, error) {
		n, err := host.TimeWaitTo(env.Addrs)
		return map[string]int64{"time_wait_sockets": int64(n)}, err
	}},
	{Cumulative: true, Optional: true, Read: func(context.Context, *bench.Env) (map[string]int64, error) {
		f, err := host.ReadFastOpen()
		return map[string]int64{
			"tcp_fastopen_active": f.Active, "tcp_fastopen_active_fail": f.ActiveFail, "tcp_fastopen_passive": f.Passive,
		}, err
	}},
}

// us converts a histogram value in ns to microseconds.
func us(ns int64) float64 { return float64(ns) / 1e3 }

// baseRaw turns a measurement into a repetition record: counts, the
// acquire and cycle histograms, CPU, errors and the failures metric.
func baseRaw(m load.Measurement, failures results.MetricSpec) (results.Raw, error) {
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
		},
		Histograms: []results.Histogram{acq, cyc},
		Errors:     rec.Errors,
		Metrics:    []results.Metric{failures.Of(float64(rec.Failures))},
	}
	// The probes' counters (spanProbes).
	maps.Copy(raw.Counts, m.Changes)
	maps.Copy(raw.Counts, m.Levels)
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
func noCycles(m load.Measurement) error {
	return fmt.Errorf("no cycle completed in %v (%d failures): %v", m.Elapsed.Round(time.Millisecond), m.Rec.Failures, m.Rec.Errors)
}

// openCoordinator opens env's coordinator counters, or returns nil when
// the contender has none or the deployment does not expose them: the
// figures that need them are then left out, not guessed.
func openCoordinator(env *bench.Env) (bench.Coordinator, error) {
	c, err := env.Coordinator()
	if errors.Is(err, bench.ErrNoCounters) {
		return nil, nil
	}
	return c, err
}

// randomHex returns a fresh random suffix for lock keys.
func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
