package scenarios

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load"
)

// slowLocker grants every Acquire after service, on the fake clock of a
// synctest bubble; it locks nothing.
type slowLocker struct{ service time.Duration }

func (s slowLocker) Acquire(ctx context.Context, _ string) (bench.Held, error) {
	if err := load.Sleep(ctx, s.service); err != nil {
		return nil, err
	}
	return nopHeld{}, nil
}
func (slowLocker) Close() error { return nil }

type nopHeld struct{}

func (nopHeld) Token() (uint64, bool)         { return 0, false }
func (nopHeld) Lost() <-chan struct{}         { return nil }
func (nopHeld) Release(context.Context) error { return nil }

// TestPacedBelowCapacity: one worker serving in 10ms, requests due every
// 20ms: no request waits, so every latency is the service time.
func TestPacedBelowCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := paced(t.Context(), slowLocker{10 * time.Millisecond}, 50, 1, time.Second, DistinctKey)
		if err != nil {
			t.Fatal(err)
		}
		if p.due != 50 || p.completed != 50 || p.unserved != 0 {
			t.Fatalf("due %d, completed %d, unserved %d; want 50, 50, 0", p.due, p.completed, p.unserved)
		}
		if lo, hi := p.latency.Min(), p.latency.Max(); !near(lo, 10*time.Millisecond) || !near(hi, 10*time.Millisecond) {
			t.Errorf("latency %v…%v, want 10ms throughout", time.Duration(lo), time.Duration(hi))
		}
	})
}

// TestPacedCountsQueueing: one worker serving in 10ms, requests due every
// 5ms (twice its capacity). Request i starts at 10ms·i, 5ms·i after it was
// due: latency is measured from the due time, so it grows by 5ms per
// request instead of staying at the 10ms a closed loop would report; the
// run stops at 1.5s, and the requests never started are counted at their
// lower bound.
func TestPacedCountsQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := paced(t.Context(), slowLocker{10 * time.Millisecond}, 200, 1, time.Second, DistinctKey)
		if err != nil {
			t.Fatal(err)
		}
		// Requests 0…149 start before 1.5s; 150…199 never do.
		if p.due != 200 || p.completed != 150 || p.unserved != 50 {
			t.Fatalf("due %d, completed %d, unserved %d; want 200, 150, 50", p.due, p.completed, p.unserved)
		}
		if got := p.latency.Min(); !near(got, 10*time.Millisecond) {
			t.Errorf("min latency %v, want 10ms (request 0)", time.Duration(got))
		}
		// Request 149: due at 745ms, granted at 1500ms: 755ms. The
		// unserved ones are bounded below by 1500ms − 995ms … 750ms.
		if got := p.latency.Max(); !near(got, 755*time.Millisecond) {
			t.Errorf("max latency %v, want 755ms", time.Duration(got))
		}
		if got := p.latency.ValueAtQuantile(50); got < int64(400*time.Millisecond) {
			t.Errorf("p50 %v: the queueing is hidden", time.Duration(got))
		}
		if got := float64(p.completed) / p.elapsed.Seconds(); got < 99 || got > 101 {
			t.Errorf("achieved %.1f/s, want the capacity 100/s", got)
		}
	})
}

// TestPacedSpreadsOverWorkers: four workers serving in 10ms each keep up
// with 300 requests a second (capacity 400/s).
func TestPacedSpreadsOverWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := paced(t.Context(), slowLocker{10 * time.Millisecond}, 300, 4, time.Second, DistinctKey)
		if err != nil {
			t.Fatal(err)
		}
		if p.completed != p.due || p.unserved != 0 || !near(p.latency.Max(), 10*time.Millisecond) {
			t.Errorf("completed %d of %d, unserved %d, max %v; want all on time", p.completed, p.due, p.unserved, time.Duration(p.latency.Max()))
		}
	})
}

// near reports whether a histogram value (ns, 3 significant digits) is d.
func near(v int64, d time.Duration) bool {
	diff := v - int64(d)
	return diff < int64(d)/500 && -diff < int64(d)/500
}
