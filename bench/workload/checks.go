package workload

import (
	"fmt"
	"math"
	"syscall"

	"github.com/monolock/monolock-bench/bench/results"
)

// Thresholds of the warnings.
const (
	// holdOverLeaseShare: a hold distribution warns when at least this
	// share of its holds outlast the lease (an exponential tail always
	// has some; 1 in 10,000 is where a run of a few thousand sees one).
	holdOverLeaseShare = 1e-4
	// busyShare: a rate that keeps this share of the clients (or of the
	// most used key) busy holding warns: requests start to queue.
	busyShare = 0.8
	// OpenFilesReserve is the open files a process keeps for everything
	// but claims: pools, listeners, logs, the runtime.
	OpenFilesReserve = 256
)

// limits are the host's limits the warnings compare against.
type limits struct {
	// openFiles is this process's hard RLIMIT_NOFILE, the most it can
	// raise its soft limit to; 0 when unknown.
	openFiles uint64
}

func hostLimits() limits {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return limits{}
	}
	return limits{openFiles: r.Max}
}

func (w Workload) warnAt(at pos, format string, args ...any) Warning {
	return Warning{Problem{File: w.Source, Line: at.line, Col: at.col, Msg: fmt.Sprintf(format, args...)}}
}

// warnings returns what is allowed in w but worth saying.
func (w Workload) warnings(host limits) []Warning {
	var ws []Warning
	if p := w.Hold.Exceeds(w.Lease); p >= holdOverLeaseShare {
		ws = append(ws, w.warnAt(w.pos.hold,
			"hold: %s of the holds (%s) outlast the lease (%s). Allowed: the lock must then be kept by heartbeats, keep-alives or a watchdog that extends the TTL; a contender that fails to keep it loses the lock, and the report counts lost locks",
			shareWords(p), w.Hold.String(), fmtDuration(w.Lease)))
	}
	if host.openFiles > 0 {
		claims := (w.Clients + w.Processes - 1) / w.Processes
		if wn, ok := w.CheckOpenFiles("the bench", host.openFiles, claims); ok {
			ws = append(ws, wn)
		}
	}
	if w.Arrivals.Loop == Open {
		ws = append(ws, w.openLoopWarnings()...)
	}
	ws = append(ws, w.sampleWarnings()...)
	return ws
}

// CheckOpenFiles warns when claims, the most claims one process holds or
// waits for at once in this workload, need more open files than limit,
// that process's RLIMIT_NOFILE (process names it: "the bench", "the
// monolock server"). Each claim is one open connection (one file) for the
// contenders that dial per claim, on both ends. The workload's clients
// hold or wait for one key at a time, so a process's claims are its
// clients, whatever the number of keys: not keys × clients. Parse checks
// the bench's own clients per process; the servers' limits, for all the
// clients, once they run.
func (w Workload) CheckOpenFiles(process string, limit uint64, claims int) (Warning, bool) {
	need := uint64(claims) + OpenFilesReserve
	if need <= limit {
		return Warning{}, false
	}
	return w.warnAt(w.pos.clients,
		"clients: up to %s claims at once in %s need %s open files, more than the %s it may open (RLIMIT_NOFILE). Each claim is an open connection (one file) for the contenders that dial per claim, plus %d files of the process's own; a client holds or waits for one key at a time, so the claims are the clients, whatever the number of keys. Claims beyond the limit fail with \"too many open files\": spread the clients over more processes (clients.processes) or raise the limit (ulimit -n)",
		thousands(claims), process, thousands(int(need)), thousands(int(min(limit, math.MaxInt32))), OpenFilesReserve), true
}

// openLoopWarnings checks an open loop's rate against what its clients
// and its most used key can serve (Little's law: busy = rate × hold).
func (w Workload) openLoopWarnings() []Warning {
	var ws []Warning
	hold := w.Hold.MeanValue().Seconds()
	if hold <= 0 {
		return nil
	}
	rate := w.Arrivals.Rate
	meanHold := fmtDuration(roundNice(w.Hold.MeanValue()))
	busy := rate * hold
	most := float64(w.Clients) / hold
	switch {
	case busy >= float64(w.Clients):
		ws = append(ws, w.warnAt(w.pos.rate,
			"arrivals.rate: %s with a mean hold of %s needs %.0f clients holding at once, more than the %d clients. No lock can serve it (Little's law: rate × mean hold): the most %d clients can complete is %s before any time spent acquiring. Add clients or lower the rate",
			fmtRate(rate), meanHold, busy, w.Clients, w.Clients, fmtRate(most)))
	case busy >= busyShare*float64(w.Clients):
		ws = append(ws, w.warnAt(w.pos.rate,
			"arrivals.rate: %s with a mean hold of %s keeps %.0f of the %d clients holding on average. Requests will queue for a free client (Little's law, before any time spent acquiring), and latency from the intended start grows with it; the most these clients can complete is %s",
			fmtRate(rate), meanHold, busy, w.Clients, fmtRate(most)))
	}
	share := w.Keys.Share(0)
	hot := rate * share * hold
	what := "the most used key"
	if w.Keys.Count == 1 {
		what = "the one key"
	}
	switch {
	case hot >= 1:
		ws = append(ws, w.warnAt(w.pos.keys,
			"keys: %s is asked for %s and held %s on average: %s of holding per second, more than one holder at a time can give; its queue grows for the whole run whatever the lock, and so do the latencies on it. Spread the keys (lower theta or the hot share, more keys) or lower the rate",
			what, fmtRate(rate*share), meanHold, fmtDuration(roundNice(seconds(hot)))))
	case hot >= busyShare:
		ws = append(ws, w.warnAt(w.pos.keys,
			"keys: %s is held %s of the time (%s × %s mean hold): its requests mostly queue behind each other, whatever the lock",
			what, percent(hot), fmtRate(rate*share), meanHold))
	}
	return ws
}

// sampleWarnings checks that the measured window of the full suite, and
// then of the quick suite, holds enough requests for the percentiles the
// thresholds name; for wait_p99, enough of them that find their key held.
func (w Workload) sampleWarnings() []Warning {
	var ws []Warning
	for i, t := range w.Thresholds {
		q, ok := map[string]float64{
			results.WorkloadMetrics.AcquireP50.Name:  0.5,
			results.WorkloadMetrics.AcquireP99.Name:  0.99,
			results.WorkloadMetrics.AcquireP999.Name: 0.999,
			results.WorkloadMetrics.WaitP99.Name:     0.99,
		}[t.Metric]
		if !ok {
			continue
		}
		for _, quick := range []bool{false, true} {
			n, how := w.expectedRequests(quick)
			if t.Metric == results.WorkloadMetrics.WaitP99.Name {
				n *= w.ContendedShare()
				how += " × the share that finds its key held"
			}
			if n <= 0 || n*(1-q) >= 1 {
				continue // enough, or unknown before measuring
			}
			window, fix := "the measured window", "lengthen duration"
			if quick {
				window, fix = "the quick suite's window", "lengthen quick.duration"
			}
			ws = append(ws, w.warnAt(pos{t.line, t.col},
				"thresholds[%d]: %s rests on about %s requests in %s (%s), fewer than the %s it needs to be more than the slowest one; %s",
				i, t.Metric, thousands(int(n)), window, how, thousands(int(math.Ceil(1/(1-q)))), fix))
			break // the quick window is the shorter
		}
	}
	return ws
}

// expectedRequests estimates the requests of a measured window, and says
// how; 0 when a closed loop without pauses makes them unknown before
// measuring.
func (w Workload) expectedRequests(quick bool) (float64, string) {
	_, d := w.Window(quick)
	if w.Arrivals.Loop == Open {
		return w.Arrivals.Rate * d.Seconds(), "rate × duration"
	}
	cycle := w.Hold.MeanValue() + w.Arrivals.Think.MeanValue()
	if cycle <= 0 {
		return 0, ""
	}
	return float64(w.Clients) * d.Seconds() / cycle.Seconds(), "at most, clients × duration / (mean hold + mean think)"
}

// CheckRate warns when an open loop's rate is above, or close to,
// closedLoopMax: the completions per second a contender reached on this
// workload in a closed loop (its clients never idle), which is known only
// after measuring. The run goes on either way and says so: achieved below
// offered is a result, not an error.
func (w Workload) CheckRate(closedLoopMax float64) (Warning, bool) {
	if w.Arrivals.Loop != Open || !(closedLoopMax > 0) {
		return Warning{}, false
	}
	rate := w.Arrivals.Rate
	switch {
	case rate > closedLoopMax:
		return w.warnAt(w.pos.rate,
			"arrivals.rate: %s is above %s, the most this contender completed on this workload in a closed loop (its %d clients never idle). It cannot keep up: achieved stays below offered and latency from the intended start grows through the run",
			fmtRate(rate), fmtRate(closedLoopMax), w.Clients), true
	case rate > busyShare*closedLoopMax:
		return w.warnAt(w.pos.rate,
			"arrivals.rate: %s is %s of %s, the most this contender completed on this workload in a closed loop. Expect requests to queue for a free client",
			fmtRate(rate), percent(rate/closedLoopMax), fmtRate(closedLoopMax)), true
	}
	return Warning{}, false
}
