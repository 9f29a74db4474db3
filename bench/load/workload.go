package load

import (
	"strconv"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/workload"
)

// MaxGrace bounds how long a workload's run goes on after its window for
// the measured requests still waiting: half the window, at most this.
const MaxGrace = 2 * time.Second

// WorkloadGrace is the grace of a workload's window.
func WorkloadGrace(window time.Duration) time.Duration { return min(window/2, MaxGrace) }

// Share is the part of a workload's clients one process runs: clients
// [First, First+Count) and, for an open loop, every Processes-th request
// of the schedule from request Process.
type Share struct {
	First, Count       int
	Process, Processes int
}

// WholeShare is every client of w in one process.
func WholeShare(w workload.Workload) Share {
	return Share{Count: w.Clients, Processes: 1}
}

// ShareOf is process p's share of w's clients when they are spread over
// w.Processes processes.
func ShareOf(w workload.Workload, p int) Share {
	lo, hi := p*w.Clients/w.Processes, (p+1)*w.Clients/w.Processes
	return Share{First: lo, Count: hi - lo, Process: p, Processes: w.Processes}
}

// WorkloadTraffic is the Traffic of a workload file's run, as every
// contender gets it: its schedule (open loop) or each client's plan
// (closed loop), its window (quick or full), keys named prefix + index,
// and client c on lockers(c).
func WorkloadTraffic(w workload.Workload, quick bool, s Share, lockers func(client int) bench.Locker, prefix string) Traffic {
	warmup, window := w.Window(quick)
	t := Traffic{
		Clients: s.Count, FirstClient: s.First,
		Locker: lockers,
		Key:    func(_, k int) string { return prefix + strconv.Itoa(k) },
		Warmup: warmup, Window: window, Grace: WorkloadGrace(window),
	}
	if w.Arrivals.Loop == workload.Open {
		t.Schedule = w.Schedule()
		if s.Processes > 1 {
			t.Take = func(q workload.Request) bool { return q.Index%int64(s.Processes) == int64(s.Process) }
		}
	} else {
		t.Plan = func(c int) Plan { return w.Client(c) }
	}
	return t
}

// CalibrationWindow is the least warm-up and the window of the
// closed-loop maximum of a workload: a few mean holds, so that the grants
// of clients that started all at once have spread out.
func CalibrationWindow(w workload.Workload, quick bool) (warmup, window time.Duration) {
	hold := w.Hold.MeanValue()
	if quick {
		return min(hold, 250*time.Millisecond), min(max(4*hold, 250*time.Millisecond), 500*time.Millisecond)
	}
	return min(hold, time.Second), min(max(8*hold, 500*time.Millisecond), 2*time.Second)
}

// shortHold is the mean hold below which a calibration's warm-up waits
// for every client's first grant: the first dials then weigh on a short
// window; with longer holds they do not, and the first grants on shared
// keys would wait out whole holds.
const shortHold = 100 * time.Millisecond

// CalibrationTraffic is the closed loop that measures a contender's
// closed-loop maximum on w: the same clients, keys and holds with no
// think time, in CalibrationWindow, after a warm-up that, for short
// holds, lasts until every client also had a grant (its connections are
// up). Its keys (prefix) must not be the measured run's: an acquire cut
// off at its end can leave its key held until the lease expires.
func CalibrationTraffic(w workload.Workload, quick bool, s Share, lockers func(client int) bench.Locker, prefix string) Traffic {
	warmup, window := CalibrationWindow(w, quick)
	return Traffic{
		Clients: s.Count, FirstClient: s.First,
		Locker: lockers,
		Key:    func(_, k int) string { return prefix + strconv.Itoa(k) },
		Plan:   func(c int) Plan { return noThink{w.Client(c)} },
		Warmup: warmup, WarmEachClient: w.Hold.MeanValue() < shortHold, Window: window,
	}
}

// noThink is a client's plan without its think times.
type noThink struct{ p Plan }

func (n noThink) Next() workload.Step {
	s := n.p.Next()
	s.Think = 0
	return s
}
