package load

import (
	"context"
	"errors"
	"fmt"
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
