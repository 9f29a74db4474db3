package load

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/workload"
	monolockclient "github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/server"
)

// within allows HdrHistogram's 3-significant-digit bucketing.
func within(got, want time.Duration) bool {
	d := got - want
	return d >= -want/500 && d <= want/500
}

func shared(l bench.Locker) func(int) bench.Locker { return func(int) bench.Locker { return l } }

func keyName(_, k int) string { return "k" + strconv.Itoa(k) }

// parse reads a workload file for a test.
func parse(t *testing.T, text string) workload.Workload {
	t.Helper()
	w, _, err := workload.Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// pipeLocker is a real monolock client of an in-memory monolock server:
// inside a synctest bubble its leases and the engine's timers run on the
// same fake clock, so the figures are exact.
func pipeLocker(t *testing.T) *monolock.Locker {
	srv := monolocktest.NewPipeServer(t, server.Config{})
	l := monolock.New(monolockclient.Config{Address: srv.Addr, Dialer: srv}, 10*time.Second)
	t.Cleanup(func() { l.Close() })
	return l
}

// checkBookkeeping asserts what holds for every run: every measured
// request is accounted for, and a latency from the intended start is
// never below the one from the call.
func checkBookkeeping(t *testing.T, log *Log) Tally {
	t.Helper()
	tl := log.Tally()
	if sum := tl.Granted + tl.Failed + tl.Censored + tl.Unstarted; sum != tl.Requests || tl.Requests == 0 {
		t.Errorf("granted %d + failed %d + censored %d + unstarted %d = %d, want the %d measured requests (> 0)",
			tl.Granted, tl.Failed, tl.Censored, tl.Unstarted, sum, tl.Requests)
	}
	for _, e := range log.Events {
		if e.Outcome != Unstarted && e.Call < e.Intended {
			t.Fatalf("request %+v called before its intended start", e)
		}
		if e.Outcome == Granted && (e.Grant < e.Call || e.Release < e.Grant) {
			t.Fatalf("request %+v: stamps out of order", e)
		}
		// (With Steps, the window ends when the last step did, so a
		// step that failed at once may start at its very end.)
		if e.Measured && e.Intended < log.Start || !e.Measured && e.Intended >= log.Start && e.Intended < log.End {
			t.Fatalf("request %+v measured %v, window [%v, %v)", e, e.Measured, log.Start, log.End)
		}
	}
	fi, fc := log.FromIntended(), log.FromCall()
	for _, q := range []float64{50, 99, 100} {
		if fi.ValueAtQuantile(q) < fc.ValueAtQuantile(q) {
			t.Errorf("p%g from the intended start %v < from the call %v", q, time.Duration(fi.ValueAtQuantile(q)), time.Duration(fc.ValueAtQuantile(q)))
		}
	}
	return tl
}

// Fake time is exact: acquire 5ms; a cycle is 5 + hold 2 + release 3.
func TestClosedLoopSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &scriptedLocker{acquireIn: 5 * time.Millisecond, releaseIn: 3 * time.Millisecond}
		log, err := Run(t.Context(), Traffic{Clients: 1, Locker: shared(l), Key: keyName,
			Plan: func(int) Plan { return FixedPlan{Hold: 2 * time.Millisecond} }, Steps: 4})
		if err != nil {
			t.Fatal(err)
		}
		rec := log.Recorder()
		if rec.Cycles != 4 || rec.Failures != 0 || len(log.Events) != 4 {
			t.Fatalf("cycles %d failures %d events %d, want 4 0 4", rec.Cycles, rec.Failures, len(log.Events))
		}
		if got := time.Duration(rec.Acquire.ValueAtQuantile(50)); !within(got, 5*time.Millisecond) {
			t.Errorf("acquire p50 %v, want 5ms", got)
		}
		if got := time.Duration(rec.Cycle.Max()); !within(got, 10*time.Millisecond) {
			t.Errorf("cycle max %v, want 10ms", got)
		}
		// The window ends when the last client made its steps.
		if log.End != 40*time.Millisecond || log.Span() != 40*time.Millisecond {
			t.Errorf("window [%v, %v), want [0, 40ms)", log.Start, log.End)
		}
		checkBookkeeping(t, log)
	})
}

func TestFailuresAndLostLocksAreCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gaveUp := fmt.Errorf("%w after 3 tries", bench.ErrGaveUp)
		for _, c := range []struct {
			name                       string
			l                          *scriptedLocker
			failures, gaveUp, lost, ok int64
		}{
			{"gave up", &scriptedLocker{acquireIn: time.Millisecond, err: gaveUp}, 3, 3, 0, 0},
			{"refused", &scriptedLocker{err: errors.New("connection refused")}, 3, 0, 0, 0},
			{"lost", &scriptedLocker{lost: true}, 0, 0, 3, 3},
		} {
			log, err := Run(t.Context(), Traffic{Clients: 1, Locker: shared(c.l), Key: keyName,
				Plan: func(int) Plan { return FixedPlan{Hold: time.Second} }, Steps: 3})
			if err != nil {
				t.Fatal(err)
			}
			rec := log.Recorder()
			if rec.Failures != c.failures || rec.GaveUp != c.gaveUp || rec.Lost != c.lost || rec.Cycles != c.ok {
				t.Errorf("%s: failures %d gave_up %d lost %d cycles %d; want %d %d %d %d", c.name,
					rec.Failures, rec.GaveUp, rec.Lost, rec.Cycles, c.failures, c.gaveUp, c.lost, c.ok)
			}
			if c.failures > 0 && len(rec.Errors) != 1 {
				t.Errorf("%s: errors %q, want the one message", c.name, rec.Errors)
			}
			// A lost lock ends its hold at once: no 1s holds.
			if c.lost > 0 && log.End > time.Second {
				t.Errorf("%s: the window ended at %v: the holds did not end when the lock was lost", c.name, log.End)
			}
			checkBookkeeping(t, log)
		}
	})
}

// The warm-up is the start of one continuous run: the request in flight
// when it ends is not cancelled (a cancelled one could leave its key held
// on the server), it is simply not measured.
func TestWarmupIsTheStartOfTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &scriptedLocker{acquireIn: 30 * time.Millisecond}
		log, err := Run(t.Context(), Traffic{Clients: 2, Locker: shared(l), Key: keyName,
			Plan: func(int) Plan { return FixedPlan{} }, Warmup: 10 * time.Millisecond, Steps: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(log.Events) != 4 {
			t.Fatalf("%d events, want 2 per client", len(log.Events))
		}
		for _, e := range log.Events {
			if e.Outcome != Granted {
				t.Errorf("request %+v not granted", e)
			}
			if e.Measured != (e.Intended == 30*time.Millisecond) {
				t.Errorf("request %+v: only the requests after the warm-up are measured", e)
			}
		}
		checkBookkeeping(t, log)
	})
}

// firstSlow is a lock whose first Acquire of each key takes dial longer
// (a connection set up), on the fake clock.
type firstSlow struct {
	mu   sync.Mutex
	seen map[string]bool
	dial time.Duration
}

func (f *firstSlow) Acquire(ctx context.Context, key string) (bench.Held, error) {
	f.mu.Lock()
	d := time.Millisecond
	if !f.seen[key] {
		d += f.dial
		f.seen[key] = true
	}
	f.mu.Unlock()
	if err := bench.Sleep(ctx, d); err != nil {
		return nil, err
	}
	return &scriptedHeld{s: &scriptedLocker{}, lost: make(chan struct{})}, nil
}
func (f *firstSlow) Close() error { return nil }

// WarmEachClient opens the window only once every client has finished a
// request: a client whose first connection takes 100ms is not measured
// dialling.
func TestWarmEachClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &firstSlow{seen: map[string]bool{"k1": true}, dial: 100 * time.Millisecond}
		log, err := Run(t.Context(), Traffic{Clients: 2, Locker: shared(l), Key: func(c, _ int) string { return "k" + strconv.Itoa(c) },
			Plan:   func(c int) Plan { return FixedPlan{Key: c} },
			Warmup: 10 * time.Millisecond, WarmEachClient: true, Window: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if log.Start != 101*time.Millisecond+1 || log.End != 151*time.Millisecond+1 {
			t.Fatalf("window [%v, %v), want it to open when client 0's first request returned, at 101ms", log.Start, log.End)
		}
		if got := time.Duration(log.Recorder().Acquire.Max()); !within(got, time.Millisecond) {
			t.Errorf("the slowest measured acquire took %v: a dial was measured", got)
		}
		checkBookkeeping(t, log)
	})
}

// The edges are read at the window's start and end, while the clients
// run.
func TestEdgesBracketTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at []time.Duration
		start := time.Now()
		l := &scriptedLocker{acquireIn: time.Millisecond}
		log, err := Run(t.Context(), Traffic{Clients: 3, Locker: shared(l), Key: keyName,
			Plan:   func(int) Plan { return FixedPlan{Hold: 7 * time.Millisecond} },
			Warmup: 100 * time.Millisecond, Window: 250 * time.Millisecond,
			Edge: func(context.Context, Edge) error { at = append(at, time.Since(start)); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if len(at) != 2 || at[0] != 100*time.Millisecond || at[1] != 350*time.Millisecond {
			t.Fatalf("edges read at %v, want 100ms and 350ms", at)
		}
		if log.EdgeSpan() != 250*time.Millisecond {
			t.Errorf("edge span %v", log.EdgeSpan())
		}
		// 3 clients × 250ms / 8ms per cycle: 93 or 96 requests start in
		// the window, depending on the phase.
		tl := checkBookkeeping(t, log)
		if tl.Requests < 90 || tl.Requests > 96 {
			t.Errorf("%d measured requests, want about 94", tl.Requests)
		}
		edgeErr := errors.New("counters unreadable")
		_, err = Run(t.Context(), Traffic{Clients: 1, Locker: shared(l), Key: keyName,
			Plan: func(int) Plan { return FixedPlan{} }, Window: time.Second,
			Edge: func(_ context.Context, e Edge) error {
				if e == WindowEnd {
					return edgeErr
				}
				return nil
			}})
		if !errors.Is(err, edgeErr) {
			t.Errorf("an edge that fails: Run = %v, want its error", err)
		}
	})
}

// An open loop twice as fast as one key can serve (holds of 50ms, 40
// requests a second, on a real monolock server): the queue grows, the
// latency from the intended start shows it, and the waits still running
// at the stop are censored, every one accounted for.
func TestOpenLoopBacklogIsMeasured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := pipeLocker(t)
		w := parse(t, `{name: t, clients: 8, keys: 1, arrivals: {loop: open, rate: 40/s, spacing: constant},
			hold: 50ms, lease: 10s, duration: 1s, warmup: 250ms}`)
		log, err := Run(t.Context(), Traffic{Clients: w.Clients, Locker: shared(l), Key: keyName,
			Schedule: w.Schedule(), Warmup: w.Warmup, Window: w.Duration})
		if err != nil {
			t.Fatal(err)
		}
		tl := checkBookkeeping(t, log)
		if tl.Requests != 40 {
			t.Errorf("%d requests due in the 1s window at 40/s, want 40", tl.Requests)
		}
		// One key held 50ms at a time grants 20 a second.
		if g, most := log.GrantsBetween(log.Start, log.End), tl.Requests+log.BacklogAt(log.Start); g > most {
			t.Errorf("%d grants in the window, above its %d requests and the backlog at its start", g, most)
		}
		achieved := float64(log.GrantsBetween(log.Start, log.End)) / log.Span().Seconds()
		if achieved > 21 || achieved < 19 {
			t.Errorf("achieved %.1f/s, want the key's capacity 20/s", achieved)
		}
		if tl.Censored+tl.Unstarted == 0 {
			t.Error("no request censored at the stop: the backlog vanished")
		}
		// The last measured request is due at 1.225s and waits behind
		// the queue of the warm-up and the window: 50 requests by then,
		// 25 of them served.
		if p := time.Duration(log.FromIntended().Max()); p < 500*time.Millisecond {
			t.Errorf("max latency from the intended start %v: the queueing is hidden", p)
		}
		if n := log.ContendedWaits().TotalCount(); n < tl.Granted/2 {
			t.Errorf("%d contended waits of %d grants: nearly every request finds the key held", n, tl.Granted)
		}
		if hs := log.Handovers(log.Start, log.End); len(hs) == 0 {
			t.Error("no handover on the one hot key")
		}
	})
}

// Grace lets the measured requests still waiting at the window's end get
// their grant; without it they are censored.
func TestGraceResolvesTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := pipeLocker(t)
		plan := func(int) Plan { return FixedPlan{Hold: 30 * time.Millisecond} }
		for _, grace := range []time.Duration{0, 200 * time.Millisecond} {
			log, err := Run(t.Context(), Traffic{Clients: 3, Locker: shared(l), Key: keyName,
				Plan: plan, Window: 100 * time.Millisecond, Grace: grace})
			if err != nil {
				t.Fatal(err)
			}
			tl := checkBookkeeping(t, log)
			switch {
			case grace == 0 && tl.Censored == 0:
				t.Errorf("no grace: %+v, want the waits at the end censored", tl)
			case grace > 0 && tl.Censored != 0:
				t.Errorf("grace %v: %+v, want every measured request granted", grace, tl)
			}
			if grace > 0 && log.Stop-log.End > 2*30*time.Millisecond+time.Millisecond {
				t.Errorf("stopped %v after the window: the run waited longer than the two holds ahead", log.Stop-log.End)
			}
		}
	})
}

// Take splits one schedule between processes: each keeps its share, and
// together they make the whole.
func TestTakeSplitsTheSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parse(t, `{name: t, clients: 4, keys: 100, arrivals: {loop: open, rate: 200/s}, hold: 1ms, lease: 2s, duration: 500ms, warmup: 0s}`)
		l := &scriptedLocker{acquireIn: time.Millisecond}
		seen := map[int64]int{}
		var all int64
		for p := range 2 {
			log, err := Run(t.Context(), Traffic{Clients: 2, FirstClient: 2 * p, Locker: shared(l), Key: keyName,
				Schedule: w.Schedule(), Take: func(q workload.Request) bool { return q.Index%2 == int64(p) },
				Window: w.Duration})
			if err != nil {
				t.Fatal(err)
			}
			all += checkBookkeeping(t, log).Requests
			for _, e := range log.Events {
				if e.Index%2 != int64(p) || (e.Client != -1 && e.Client/2 != p) {
					t.Fatalf("process %d ran %+v", p, e)
				}
				if e.Measured {
					seen[e.Index]++
				}
			}
		}
		whole := int64(0)
		s := w.Schedule()
		for q := s.Next(); q.Due < w.Duration; q = s.Next() {
			whole++
			if seen[q.Index] != 1 {
				t.Fatalf("request %d ran %d times", q.Index, seen[q.Index])
			}
		}
		if all != whole {
			t.Errorf("%d requests in the shares, %d in the schedule", all, whole)
		}
	})
}

// Against a real monolock server over TCP on the real clock (so with a
// loaded machine's noise), a job-queue-like Poisson open loop: the
// bookkeeping and the physics hold.
func TestOpenLoopOnARealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("a 1.5s run against a real server")
	}
	srv := monolocktest.NewServer(t)
	w := parse(t, `{name: t, clients: 16, keys: {count: 200, distribution: zipfian, theta: 0.9},
		arrivals: {loop: open, rate: 200/s}, hold: {exponential: {mean: 5ms}}, lease: 10s, duration: 1s, warmup: 250ms}`)
	lockers := make([]bench.Locker, w.Clients)
	for i := range lockers {
		lockers[i] = monolock.New(monolockclient.Config{Address: srv.Addr}, w.Lease)
		defer lockers[i].Close()
	}
	log, err := Run(t.Context(), Traffic{Clients: w.Clients, Locker: func(c int) bench.Locker { return lockers[c] },
		Key: keyName, Schedule: w.Schedule(), Warmup: w.Warmup, Window: w.Duration, Grace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tl := checkBookkeeping(t, log)
	// Grants in the window can exceed its arrivals only by the backlog it
	// inherited.
	if g, most := log.GrantsBetween(log.Start, log.End), tl.Requests+log.BacklogAt(log.Start); g > most {
		t.Errorf("%d grants in the window, above its %d requests and the backlog at its start", g, most)
	}
	if tl.Failed != 0 || tl.Granted == 0 {
		t.Errorf("%+v: want grants and no failure", tl)
	}
	// A wait cancelled at the stop closes its connection; the server
	// drops what it held for it once it sees the close.
	deadline := time.Now().Add(10 * time.Second)
	for srv.Server().Stats().LocksHeld != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("10s after the run the server holds %d locks: a hold outlived the run", srv.Server().Stats().LocksHeld)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
