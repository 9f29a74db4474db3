package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// scriptedLocker is a stand-in lock for testing the harness itself (not a
// measured system): Acquire takes acquireIn, Release takes releaseIn, and
// err, when set, is returned by Acquire.
type scriptedLocker struct {
	acquireIn, releaseIn time.Duration
	err                  error
	lost                 bool
}

func (s *scriptedLocker) Acquire(ctx context.Context, _ string) (bench.Held, error) {
	select {
	case <-time.After(s.acquireIn):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.err != nil {
		return nil, s.err
	}
	h := &scriptedHeld{s: s, lost: make(chan struct{})}
	if s.lost {
		close(h.lost)
	}
	return h, nil
}
func (s *scriptedLocker) Close() error { return nil }

type scriptedHeld struct {
	s    *scriptedLocker
	lost chan struct{}
}

func (h *scriptedHeld) Token() (uint64, bool) { return 0, false }
func (h *scriptedHeld) Lost() <-chan struct{} { return h.lost }
func (h *scriptedHeld) Release(context.Context) error {
	time.Sleep(h.s.releaseIn)
	return nil
}

func TestTimedMeasuresAroundTheSeam(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := NewRecorder()
		l := Timed(&scriptedLocker{acquireIn: 5 * time.Millisecond, releaseIn: 3 * time.Millisecond}, rec)
		for range 4 {
			if err := Cycle(t.Context(), l, "k", 2*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
		if rec.Cycles != 4 || rec.Failures != 0 {
			t.Fatalf("cycles %d failures %d", rec.Cycles, rec.Failures)
		}
		// Fake time is exact: acquire 5ms; cycle 5 + hold 2 + release 3.
		if got := time.Duration(rec.Acquire.ValueAtQuantile(50)); !within(got, 5*time.Millisecond) {
			t.Errorf("acquire p50 %v, want 5ms", got)
		}
		if got := time.Duration(rec.Cycle.Max()); !within(got, 10*time.Millisecond) {
			t.Errorf("cycle max %v, want 10ms", got)
		}
	})
}

// within allows HdrHistogram's 3-significant-digit bucketing.
func within(got, want time.Duration) bool {
	d := got - want
	return d >= -want/500 && d <= want/500
}

func TestTimedCountsFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := NewRecorder()
		gaveUp := fmt.Errorf("%w after 3 tries", bench.ErrGaveUp)
		if _, err := Timed(&scriptedLocker{err: gaveUp}, rec).Acquire(t.Context(), "k"); !errors.Is(err, bench.ErrGaveUp) {
			t.Fatal(err)
		}
		if _, err := Timed(&scriptedLocker{err: errors.New("connection refused")}, rec).Acquire(t.Context(), "k"); err == nil {
			t.Fatal("want an error")
		}
		// A worker stopped by the harness is not a failure of the lock.
		ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		defer cancel()
		if _, err := Timed(&scriptedLocker{acquireIn: time.Second}, rec).Acquire(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		if err := Cycle(t.Context(), Timed(&scriptedLocker{lost: true}, rec), "k", 0); err != nil {
			t.Fatal(err)
		}
		if rec.Failures != 2 || rec.GaveUp != 1 || rec.Lost != 1 || rec.Cycles != 1 || len(rec.Errors) != 2 {
			t.Fatalf("failures %d gave_up %d lost %d cycles %d errors %q; want 2 1 1 1 and two messages",
				rec.Failures, rec.GaveUp, rec.Lost, rec.Cycles, rec.Errors)
		}
	})
}

// fakeServer is a server whose CPU clock never moves.

// A warm-up ends between cycles: the acquire in flight when it ends is not
// cancelled (a cancelled one could leave its key held on the server).
func TestWarmupEndsBetweenCycles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &scriptedLocker{acquireIn: 30 * time.Millisecond}
		stop, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		recs := runWorkers(t.Context(), stop, l, Workload{Workers: 2, Key: func(int) string { return "k" }}, 0)
		for i, r := range recs {
			if r.Cycles != 1 || r.Failures != 0 {
				t.Errorf("worker %d: %d cycles, %d failures; want the one in flight completed", i, r.Cycles, r.Failures)
			}
		}
	})
}

// cpuServer is a server whose CPU clock the backend can read.
type cpuServer struct{ bench.Server }

func (cpuServer) Addr() string { return "127.0.0.1:1" }
func (cpuServer) CPU(context.Context) (time.Duration, string, bool, error) {
	return time.Second, "fake", true, nil
}

// Measure records a cumulative probe's change over the span and a level
// probe's value after it; an optional probe that cannot be read is left
// out, a required one fails the measurement.
func TestMeasureReadsProbes(t *testing.T) {
	env := &bench.Env{
		Contender: bench.Contender{Name: "scripted", Open: func(context.Context, []string, time.Duration) (bench.Locker, error) {
			return &scriptedLocker{}, nil
		}},
		Servers: []bench.Server{cpuServer{}},
		Addrs:   []string{"127.0.0.1:1"},
	}
	reads := 0
	counter := Probe{Cumulative: true, Read: func(context.Context, *bench.Env) (map[string]int64, error) {
		reads++
		return map[string]int64{"counter": int64(5 + 7*(reads-1))}, nil
	}}
	level := Probe{Read: func(_ context.Context, e *bench.Env) (map[string]int64, error) {
		return map[string]int64{"level": int64(len(e.Addrs) + 2)}, nil
	}}
	broken := func(optional, cumulative bool) Probe {
		return Probe{Optional: optional, Cumulative: cumulative, Read: func(context.Context, *bench.Env) (map[string]int64, error) {
			return map[string]int64{"broken": 1}, errors.New("unreadable")
		}}
	}
	w := Workload{Workers: 1, Key: func(int) string { return "k" }, Cycles: 2,
		Probes: []Probe{counter, level, broken(true, true), broken(true, false)}}
	m, err := Measure(t.Context(), env, w)
	if err != nil {
		t.Fatal(err)
	}
	if m.Rec.Cycles != 2 || reads != 2 {
		t.Fatalf("%d cycles, %d reads of the counter; want 2 and 2 (before and after)", m.Rec.Cycles, reads)
	}
	if len(m.Changes) != 1 || m.Changes["counter"] != 7 || len(m.Levels) != 1 || m.Levels["level"] != 3 {
		t.Fatalf("changes %v levels %v; want counter 7 and level 3 alone", m.Changes, m.Levels)
	}
	for _, cumulative := range []bool{true, false} {
		w.Probes = []Probe{broken(false, cumulative)}
		if _, err := Measure(t.Context(), env, w); err == nil || !strings.Contains(err.Error(), "unreadable") {
			t.Errorf("a required probe (cumulative %v) that fails: Measure = %v, want its error", cumulative, err)
		}
	}
}
