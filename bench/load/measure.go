package load

import (
	"context"
	"fmt"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
)

// ClosedLoop describes the scenarios' closed-loop load: Workers clients
// sharing one Locker, each cycling acquire → hold → release on
// Key(worker) as fast as it can, after a warm-up that is not measured.
// It runs on the engine (Run) as a fixed Plan per worker.
type ClosedLoop struct {
	Workers int
	// Key returns the lock key of a worker.
	Key func(worker int) string
	// Hold is how long each grant is held; zero releases at once.
	Hold time.Duration
	// Warmup is run before the measured window and not counted; it lasts
	// until every worker has also finished a cycle (its connections are
	// up).
	Warmup time.Duration
	// Cycles, when positive, ends the measured window after every worker
	// made that many requests after the warm-up; otherwise the window is
	// Duration long: the requests started in it are measured, and the run
	// stops at its end (waits still running then are left out, holds cut).
	Cycles   int
	Duration time.Duration
	// Probes are the counters Measure reads at the window's edges, in
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

// Measurement is the outcome of one ClosedLoop.
type Measurement struct {
	// Rec holds the figures of the measured requests (Log.Recorder).
	Rec *Recorder
	// Elapsed is the measured window on the monotonic clock.
	Elapsed time.Duration
	// ServerCPU is the CPU time of the contender's servers between the
	// window's edges; ServerCPUOK is false when the backend cannot see it.
	ServerCPU       time.Duration
	ServerCPUSource string
	ServerCPUOK     bool
	// ClientCPU is the bench process's CPU time between the edges.
	ClientCPU time.Duration
	// Changes are the cumulative probes' counters' change over the
	// window, Levels the other probes' counters at its end; an optional
	// probe that could not be read has none.
	Changes, Levels map[string]int64
	// Log is the run's event log.
	Log *Log
}

// Measure opens env's contender, runs w against it on the engine and
// closes it again. CPU and the probes are read at the window's edges.
func Measure(ctx context.Context, env *bench.Env, w ClosedLoop) (Measurement, error) {
	l, err := env.Open(ctx)
	if err != nil {
		return Measurement{}, err
	}
	defer l.Close()

	m := Measurement{Changes: map[string]int64{}, Levels: map[string]int64{}}
	var srv0, cli0 time.Duration
	before := make([]map[string]int64, len(w.Probes))
	edge := func(ctx context.Context, e Edge) error {
		var err error
		if e == WindowStart {
			if srv0, m.ServerCPUSource, m.ServerCPUOK, err = env.ServerCPU(ctx); err != nil {
				return err
			}
			if cli0, err = host.SelfCPU(); err != nil {
				return err
			}
			for i, p := range w.Probes {
				if p.Cumulative {
					if before[i], err = readProbe(ctx, env, p); err != nil {
						return err
					}
				}
			}
			return nil
		}
		cli1, err := host.SelfCPU()
		if err != nil {
			return err
		}
		srv1, _, _, err := env.ServerCPU(ctx)
		if err != nil {
			return err
		}
		m.ClientCPU, m.ServerCPU = cli1-cli0, srv1-srv0
		for i, p := range w.Probes {
			if p.Cumulative && before[i] == nil {
				continue // an optional probe that could not be read
			}
			got, err := readProbe(ctx, env, p)
			if err != nil {
				return err
			}
			for k, v := range got { // none when an optional probe failed
				if p.Cumulative {
					m.Changes[k] = v - before[i][k]
				} else {
					m.Levels[k] = v
				}
			}
		}
		return nil
	}
	log, err := Run(ctx, Traffic{
		Clients: w.Workers,
		Locker:  func(int) bench.Locker { return l },
		Key:     func(worker, _ int) string { return w.Key(worker) },
		Plan:    func(worker int) Plan { return FixedPlan{Key: worker, Hold: w.Hold} },
		Warmup:  w.Warmup, WarmEachClient: true, Window: w.Duration, Steps: w.Cycles,
		Edge: edge,
	})
	if err != nil {
		return Measurement{}, err
	}
	if !m.ServerCPUOK {
		m.ServerCPU = 0
	}
	m.Rec, m.Elapsed, m.Log = log.Recorder(), log.Span(), log
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
