package scenarios

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// slowLocker grants every Acquire after service, on the fake clock of a
// synctest bubble; it locks nothing.
type slowLocker struct{ service time.Duration }

func (s slowLocker) Acquire(ctx context.Context, _ string) (bench.Held, error) {
	if err := bench.Sleep(ctx, s.service); err != nil {
		return nil, err
	}
	return nopHeld{}, nil
}
func (slowLocker) Close() error { return nil }

// slowEnv is an Env whose contender is a slowLocker and whose server's
// CPU cannot be seen (as on the external backend).
func slowEnv(service time.Duration) *bench.Env {
	return &bench.Env{Contender: bench.Contender{Name: "slow", New: func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
		return slowLocker{service}, nil
	}}, Servers: []bench.Server{blindServer{}}}
}

type blindServer struct{ bench.Server }

func (blindServer) CPU(context.Context) (time.Duration, string, bool, error) {
	return 0, "", false, nil
}

type nopHeld struct{}

func (nopHeld) Token() (uint64, bool)         { return 0, false }
func (nopHeld) Lost() <-chan struct{}         { return nil }
func (nopHeld) Release(context.Context) error { return nil }

// TestPacedBelowCapacity: one worker serving in 10ms, requests due every
// 20ms: no request waits, so every latency is the service time.
func TestPacedBelowCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := paced(t.Context(), slowEnv(10*time.Millisecond), 50, 1, 0, time.Second, DistinctKey)
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

// TestPacedCountsQueueing: one worker serving in 11ms, requests due every
// 5ms (more than twice its capacity). Request i starts at 11ms·i, 6ms·i
// after it was due: latency is measured from the due time, so it grows
// by 6ms per request instead of staying at the 11ms a closed loop would
// report; the run stops at 1.5s, half the window after it, and the
// request waiting then and those never started are counted at their
// lower bound.
func TestPacedCountsQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := paced(t.Context(), slowEnv(11*time.Millisecond), 200, 1, 0, time.Second, DistinctKey)
		if err != nil {
			t.Fatal(err)
		}
		// Requests 0…135 are granted by 1496ms, 136 is waiting at 1.5s,
		// 137…199 never start.
		if p.due != 200 || p.completed != 136 || p.unserved != 64 {
			t.Fatalf("due %d, completed %d, unserved %d; want 200, 136, 64", p.due, p.completed, p.unserved)
		}
		if got := p.latency.Min(); !near(got, 11*time.Millisecond) {
			t.Errorf("min latency %v, want 11ms (request 0)", time.Duration(got))
		}
		// Request 135: due at 675ms, granted at 1496ms: 821ms. The
		// others are bounded below by 1500ms − 680ms … 505ms.
		if got := p.latency.Max(); !near(got, 821*time.Millisecond) {
			t.Errorf("max latency %v, want 821ms", time.Duration(got))
		}
		if got := p.latency.ValueAtQuantile(50); got < int64(400*time.Millisecond) {
			t.Errorf("p50 %v: the queueing is hidden", time.Duration(got))
		}
		// 90 grants in the 1s window: the capacity, 1/11ms.
		if got := float64(p.granted) / p.span.Seconds(); got != 90 {
			t.Errorf("achieved %.1f/s, want the capacity 90/s", got)
		}
	})
}

// TestPacedSpreadsOverWorkers: four workers serving in 10ms each keep up
// with 300 requests a second (capacity 400/s).
func TestPacedSpreadsOverWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := paced(t.Context(), slowEnv(10*time.Millisecond), 300, 4, 0, time.Second, DistinctKey)
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

// TestPacedNoGrantIsSaturation: a contender whose grants take longer than
// the whole run (a short quick window on a loaded machine) gives a
// record of a saturated window, its latencies lower bounds of at least
// the time the requests waited, not a failed step; a run whose requests
// failed stays an error.
func TestPacedNoGrantIsSaturation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		window := 200 * time.Millisecond
		p, err := paced(t.Context(), slowEnv(10*window), 500, 1, 0, window, DistinctKey)
		if err != nil {
			t.Fatal(err)
		}
		if p.everGranted != 0 || p.unserved == 0 {
			t.Fatalf("granted %d, unserved %d: want no grant and a backlog", p.everGranted, p.unserved)
		}
		raw, err := p.outcome(500, 0)
		if err != nil {
			t.Fatalf("a saturated window failed the step: %v", err)
		}
		if raw.Counts["saturated_no_grant"] != 1 || len(raw.Errors) == 0 {
			t.Errorf("counts %v, errors %v: the record does not say it saturated", raw.Counts, raw.Errors)
		}
		for _, m := range raw.Metrics {
			// The first request, due at the window's start, waited at
			// least until the stop, drainFactor windows later.
			if m.Name == "acquire_p999" && m.Value < float64(window/time.Microsecond) {
				t.Errorf("p99.9 %vus below the window: not a lower bound", m.Value)
			}
		}
		p.failures = 1
		if _, err := p.outcome(500, 0); err == nil {
			t.Error("no grant with failures: want an error")
		}
	})
}
