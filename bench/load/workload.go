// Package load generates the measured load: a closed-loop Workload of
// workers cycling acquire → hold → release through the Timed decorator,
// which times every call around the seam into a Recorder. Measure opens a
// contender, runs a Workload against it and samples CPU, and the counters
// of the Probes the workload names, around the measured span.
package load

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
)

// Workload describes a closed-loop load: Workers goroutines, each cycling
// acquire → hold → release on Key(worker) as fast as it can, after a
// warm-up whose measurements are discarded.
type Workload struct {
	Workers int
	// Key returns the lock key of a worker.
	Key func(worker int) string
	// Hold is how long each grant is held; zero releases at once.
	Hold time.Duration
	// Warmup is run before the measured span and not counted.
	Warmup time.Duration
	// Cycles, when positive, ends the measured span after every worker
	// completed that many cycles; otherwise Duration ends it.
	Cycles   int
	Duration time.Duration
	// Probes are the counters Measure reads around the measured span, in
	// order. Default: none.
	Probes []Probe
}

// Probe reads counters of the machine or of the contender's servers (a
// kernel counter, a socket count) that a scenario or a contender wants
// beside the timings.
type Probe struct {
	// Read returns the counters by the name they take in a record's
	// counts.
	Read func(ctx context.Context, env *bench.Env) (map[string]int64, error)
	// Cumulative counters are read before and after the span and recorded
	// as their change (Measurement.Changes); otherwise Read runs once,
	// after the span, and records the level it finds (Measurement.Levels).
	Cumulative bool
	// Optional: when a read fails, the probe's counters are left out;
	// otherwise the measurement fails.
	Optional bool
}

// Measurement is the outcome of one Workload.
type Measurement struct {
	// Rec merges every worker's Recorder of the measured span.
	Rec *Recorder
	// Elapsed is the measured span on the monotonic clock.
	Elapsed time.Duration
	// ServerCPU is the CPU time of the contender's servers during the
	// span; ServerCPUOK is false when the backend cannot see it.
	ServerCPU       time.Duration
	ServerCPUSource string
	ServerCPUOK     bool
	// ClientCPU is the bench process's CPU time during the span.
	ClientCPU time.Duration
	// Changes are the cumulative probes' counters' change over the span,
	// Levels the other probes' counters at its end; an optional probe
	// that could not be read has none.
	Changes, Levels map[string]int64
}

// Measure opens env's contender, runs w against it and closes it again.
func Measure(ctx context.Context, env *bench.Env, w Workload) (Measurement, error) {
	l, err := env.Open(ctx)
	if err != nil {
		return Measurement{}, err
	}
	defer l.Close()

	if w.Warmup > 0 {
		// The warm-up ends between cycles, not within one: an acquire cut
		// off there can leave its key held until the lease expires (the
		// grant reached the server, its reply was dropped), and the
		// measured span on the same keys would wait that out.
		stop, cancel := context.WithTimeout(ctx, w.Warmup)
		runWorkers(ctx, stop, l, w, 0)
		cancel()
		if err := ctx.Err(); err != nil {
			return Measurement{}, err
		}
	}

	var m Measurement
	srv0, src, ok, err := env.ServerCPU(ctx)
	if err != nil {
		return m, err
	}
	cli0, err := host.SelfCPU()
	if err != nil {
		return m, err
	}
	before := make([]map[string]int64, len(w.Probes))
	for i, p := range w.Probes {
		if p.Cumulative {
			if before[i], err = readProbe(ctx, env, p); err != nil {
				return m, err
			}
		}
	}
	mctx, cancel := ctx, context.CancelFunc(func() {})
	if w.Cycles <= 0 {
		mctx, cancel = context.WithTimeout(ctx, w.Duration)
	}
	start := time.Now()
	recs := runWorkers(mctx, mctx, l, w, w.Cycles)
	m.Elapsed = time.Since(start)
	cancel()
	if err := ctx.Err(); err != nil {
		return m, err
	}
	cli1, err := host.SelfCPU()
	if err != nil {
		return m, err
	}
	srv1, _, _, err := env.ServerCPU(ctx)
	if err != nil {
		return m, err
	}
	m.Changes, m.Levels = map[string]int64{}, map[string]int64{}
	for i, p := range w.Probes {
		if !p.Cumulative || before[i] == nil {
			continue
		}
		after, err := readProbe(ctx, env, p)
		if err != nil {
			return m, err
		}
		for k, v := range after { // none when an optional probe failed
			m.Changes[k] = v - before[i][k]
		}
	}
	m.Rec = NewRecorder()
	for _, r := range recs {
		m.Rec.Merge(r)
	}
	m.ClientCPU = cli1 - cli0
	for _, p := range w.Probes {
		if p.Cumulative {
			continue
		}
		got, err := readProbe(ctx, env, p)
		if err != nil {
			return m, err
		}
		maps.Copy(m.Levels, got)
	}
	m.ServerCPU, m.ServerCPUSource, m.ServerCPUOK = srv1-srv0, src, ok
	return m, nil
}

// readProbe reads p, returning nil counters and no error when an optional
// probe cannot be read.
func readProbe(ctx context.Context, env *bench.Env, p Probe) (map[string]int64, error) {
	got, err := p.Read(ctx, env)
	switch {
	case err == nil:
		return got, nil
	case p.Optional:
		return nil, nil
	default:
		return nil, fmt.Errorf("load: probe: %w", err)
	}
}

// runWorkers runs w's workers on ctx until stop ends or, when cycles > 0,
// until each completed that many cycles, and returns their recorders.
func runWorkers(ctx, stop context.Context, l bench.Locker, w Workload, cycles int) []*Recorder {
	recs := make([]*Recorder, w.Workers)
	var wg sync.WaitGroup
	for i := range w.Workers {
		recs[i] = NewRecorder()
		tl := Timed(l, recs[i])
		key := w.Key(i)
		wg.Go(func() {
			for n := 0; !stopped(stop) && (cycles <= 0 || n < cycles); n++ {
				if err := Cycle(ctx, tl, key, w.Hold); err != nil && !stopped(stop) {
					// A failed cycle is counted by the recorder; pause
					// briefly so a dead server does not turn into a spin.
					_ = Sleep(ctx, 10*time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	return recs
}

// Sleep waits d or until ctx ends, and then returns ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
