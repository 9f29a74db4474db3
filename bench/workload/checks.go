package workload

import (
	"fmt"
	"math"
	"syscall"
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
// contenders that dial per claim, on both ends; the workload's clients
// hold or wait for one key at a time, so a process's claims are its
// clients (keys do not multiply them). Parse checks the bench's own
// clients; the servers' limits can be checked once they run.
func (w Workload) CheckOpenFiles(process string, limit uint64, claims int) (Warning, bool) {
	need := uint64(claims) + OpenFilesReserve
	if need <= limit {
		return Warning{}, false
	}
	return w.warnAt(w.pos.clients,
		"clients: up to %s claims at once in %s, each an open connection (one file) for the contenders that dial per claim, plus %d files of its own, need %s open files; %s may open %s (RLIMIT_NOFILE): claims beyond it fail with \"too many open files\". Spread the clients over more processes (clients.processes) or raise the limit (ulimit -n)",
		thousands(claims), process, OpenFilesReserve, thousands(int(need)), process, thousands(int(min(limit, math.MaxInt32)))), true
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
			"arrivals.rate: %s with a mean hold of %s needs %.0f clients holding at once (Little's law: rate × mean hold), more than the %d clients: no lock can serve it, since the most %d clients can complete is %s before any time spent acquiring. Add clients or lower the rate",
			fmtRate(rate), meanHold, busy, w.Clients, w.Clients, fmtRate(most)))
	case busy >= busyShare*float64(w.Clients):
		ws = append(ws, w.warnAt(w.pos.rate,
			"arrivals.rate: %s with a mean hold of %s keeps %.0f of the %d clients holding on average (Little's law), before any time spent acquiring: requests will queue for a free client, and latency from the intended start grows with it; the most these clients can complete is %s",
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

// sampleWarnings checks that the measured window holds enough requests
// for the percentiles the thresholds name.
func (w Workload) sampleWarnings() []Warning {
	var n float64
	how := "rate × duration"
	if w.Arrivals.Loop == Open {
		n = w.Arrivals.Rate * w.Duration.Seconds()
	} else {
		cycle := w.Hold.MeanValue() + w.Arrivals.Think.MeanValue()
		if cycle <= 0 {
			return nil // as many as the lock allows: unknown before measuring
		}
		n = float64(w.Clients) * w.Duration.Seconds() / cycle.Seconds()
		how = "at most, clients × duration / (mean hold + mean think)"
	}
	var ws []Warning
	for i, t := range w.Thresholds {
		q, ok := map[string]float64{"acquire_p50": 0.5, "acquire_p99": 0.99, "acquire_p999": 0.999}[t.Metric]
		if !ok || n*(1-q) >= 1 {
			continue
		}
		need := int(math.Ceil(1 / (1 - q)))
		ws = append(ws, w.warnAt(pos{t.line, t.col},
			"thresholds[%d]: %s rests on about %s requests in the measured window (%s), fewer than the %s it needs to be more than the slowest one; lengthen duration",
			i, t.Metric, thousands(int(n)), how, thousands(need)))
	}
	return ws
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
			"arrivals.rate: %s is above %s, the most this contender completed on this workload in a closed loop (its %d clients never idle): it cannot keep up, so achieved stays below offered and latency from the intended start grows through the run",
			fmtRate(rate), fmtRate(closedLoopMax), w.Clients), true
	case rate > busyShare*closedLoopMax:
		return w.warnAt(w.pos.rate,
			"arrivals.rate: %s is %s of %s, the most this contender completed on this workload in a closed loop: expect requests to queue for a free client",
			fmtRate(rate), percent(rate/closedLoopMax), fmtRate(closedLoopMax)), true
	}
	return Warning{}, false
}
