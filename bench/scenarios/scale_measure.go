package scenarios

// The scale scenario's readings: server and client memory, counters, and the cap on opening.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/load/sessions"
	"github.com/monolock/monolock-bench/bench/results"
)

// memory sums the servers' anonymous and total memory; ok is false when a
// server's memory cannot be read.
func (s *setup) memory(ctx context.Context) (anon, total float64, ok bool, err error) {
	if len(s.readers) == 0 {
		return 0, 0, false, nil
	}
	for _, r := range s.readers {
		m, err := r.Footprint(ctx)
		if err != nil {
			return 0, 0, false, err
		}
		anon += float64(m.Anon)
		total += float64(m.Total)
	}
	return anon, total, true, nil
}

// clientMemory is the bench's live Go heap and stacks after a collection.
func clientMemory() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc + m.StackInuse)
}

// reading is the coordinator's counters and CPU at one moment.
type reading struct {
	at     time.Time
	counts bench.Counts
	cpu    time.Duration
	cpuOK  bool
	source string
	self   time.Duration // the bench process's CPU: the load generator's share
}

func (s *setup) read(ctx context.Context, env *bench.Env) (reading, error) {
	r := reading{at: time.Now()}
	var err error
	if r.self, err = host.SelfCPU(); err != nil {
		return r, err
	}
	if s.probe != nil {
		if r.counts, err = s.probe.Counts(ctx); err != nil {
			return r, err
		}
	}
	r.cpu, r.source, r.cpuOK, err = env.ServerCPU(ctx)
	return r, err
}

// load appends the window's coordinator figures: CPU per second, commands
// and keep-alives per second, and the bench's own CPU (the clients share
// the machine's cores with the servers).
func (s *setup) load(raw *results.Raw, a, b reading) {
	sm := results.ScaleMetrics
	secs := b.at.Sub(a.at).Seconds()
	raw.Seconds = secs
	self := float64(b.self-a.self) / 1e6
	raw.Metrics = append(raw.Metrics, sm.BenchCPUMsPerSec.Of(self/secs))
	if a.cpuOK && b.cpuOK {
		cpu := b.cpu - a.cpu
		raw.CPU = &results.CPU{ServerMS: float64(cpu) / 1e6, ServerSource: b.source, ClientMS: self}
		raw.Metrics = append(raw.Metrics, sm.ServerCPUMsPerSec.Of(float64(cpu)/1e6/secs))
	}
	if s.probe != nil {
		ops, ka := b.counts.Commands-a.counts.Commands, b.counts.KeepAlives-a.counts.KeepAlives
		raw.Metrics = append(raw.Metrics,
			sm.ServerOpsPerSec.Of(float64(ops)/secs),
			sm.HeartbeatsPerSec.Of(float64(ka)/secs))
		if ka > 0 && a.cpuOK && b.cpuOK && b.cpu > a.cpu {
			raw.Metrics = append(raw.Metrics, sm.ServerCPUUsPerHeartbeat.Of(float64(b.cpu-a.cpu)/1e3/float64(ka)))
		}
		if ka > 0 {
			raw.Metrics = append(raw.Metrics, sm.ClientCPUUsPerHeartbeat.Of(self*1e3/float64(ka)))
		}
	}
}

// record starts the repetition's record with the setup's counts, limits
// and notes.
func (s *setup) record() results.Raw {
	raw := results.Raw{Counts: s.counts}
	for _, n := range s.notes {
		raw.Errors = load.NoteError(raw.Errors, n)
	}
	return raw
}

// memorySampler samples the servers' memory against the sessions held
// (or queued) while they open, for the slope.
type memorySampler struct {
	held   atomic.Int64 // sessions held or queued, at the last progress
	mu     sync.Mutex
	points []sessions.Point
	err    error
}

func (m *memorySampler) run(ctx context.Context, s *setup) {
	t := time.NewTicker(memoryEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n := m.held.Load()
		anon, _, ok, err := s.memory(ctx)
		m.mu.Lock()
		if err != nil && ctx.Err() == nil {
			m.err = err
		}
		if ok && err == nil {
			m.points = append(m.points, sessions.Point{X: float64(n), Y: anon})
		}
		m.mu.Unlock()
	}
}

// openSessions opens cfg's sessions on s's Locker while sampling memory;
// on failure the error says how many were held.
func (s *setup) openSessions(ctx context.Context, cfg sessions.Config) (*sessions.Set, *memorySampler, error) {
	smp := &memorySampler{}
	cfg.Locker = s.locker
	cfg.Progress = func(p sessions.Progress) { smp.held.Store(int64(p.Held + p.Queued)) }
	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { smp.run(sctx, s) })
	set, err := sessions.Open(ctx, cfg)
	stop()
	wg.Wait()
	if err != nil {
		return nil, smp, err
	}
	return set, smp, nil
}

// reached is the record of a variant whose sessions could not all open:
// how many did, and why not more.
func (s *setup) reached(smp *memorySampler, err error) (results.Raw, error) {
	if errors.Is(err, context.Canceled) {
		return results.Raw{}, err
	}
	raw := s.record()
	// At most C: the server's waiting counter may still count waiters an
	// earlier variant left.
	n := min(smp.held.Load(), int64(s.c))
	raw.Metrics = []results.Metric{results.ScaleMetrics.SessionsReached.Of(float64(n))}
	raw.Skipped = fmt.Sprintf("opened %d of %d sessions: %v", n, s.c, err)
	return raw, nil
}

// timeCapped reports whether err came from the variant's own time cap
// (ctx's deadline) rather than from the run's end (outer).
func timeCapped(outer, ctx context.Context, err error) bool {
	return err != nil && outer.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// overCap is the record of a variant whose time cap ended it after its
// sessions opened, before what: the sessions reached and why no figure
// follows. Any other error stays an error.
func (s *setup) overCap(outer, ctx context.Context, reached int, what string, err error) (results.Raw, error) {
	if !timeCapped(outer, ctx, err) {
		return results.Raw{}, err
	}
	raw := s.record()
	raw.Metrics = []results.Metric{results.ScaleMetrics.SessionsReached.Of(float64(reached))}
	raw.Skipped = fmt.Sprintf("all %d sessions opened, but the variant's time cap ended before %s", reached, what)
	return raw, nil
}
