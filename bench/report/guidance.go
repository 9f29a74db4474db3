package report

import (
	"fmt"
	"strings"
)

// guidance writes "which lock when": advice that follows from this run's
// numbers, then the trade-offs a benchmark run does not measure, labelled
// as such.
func (f *figures) guidance(d *document, claims []Claim) {
	d.h2("Which lock when")
	verdict := map[string]Verdict{}
	for _, c := range claims {
		verdict[c.ID] = c.Verdict
	}
	var measured []string

	if m, ok := f.row("latency", monolock, "w1", "acquire_p50"); ok {
		if r, ok := f.row("latency", redis, "w1", "acquire_p50"); ok {
			faster := monolock
			if r.Median < m.Median {
				faster = redis
			}
			measured = append(measured, fmt.Sprintf(
				"Single uncontended acquisitions: %s was faster (median %s vs %s). The claim of almost equal latency %s, so latency alone %s a reason to choose.",
				faster, withUnit(min(m.Median, r.Median), m.Unit), withUnit(max(m.Median, r.Median), m.Unit),
				verdictText(verdict["acquire-latency"]), map[bool]string{true: "is not", false: "may be"}[verdict["acquire-latency"] == Holds]))
		}
	}
	if v, w := f.highestDistinct(monolock, redis); v != "" {
		m, _ := f.row("throughput", monolock, v, "cycles_per_sec")
		r, _ := f.row("throughput", redis, v, "cycles_per_sec")
		winner, lw, hi := redis, m, r
		if m.Median >= r.Median {
			winner, lw, hi = monolock, r, m
		}
		measured = append(measured, fmt.Sprintf(
			"Very many very short locks (hold 0, %d workers on distinct keys): %s completed more cycles (%s/s vs %s/s, %s). Each monolock claim is a new TCP connection; Redis reuses its pool.",
			w, winner, num(hi.Median), num(lw.Median), ratio(hi.Median, lw.Median)))
	}
	if m, ok := f.row("handover", monolock, "crash", "p50"); ok {
		line := fmt.Sprintf("Holders that may crash: with monolock the next waiter got the lock a median %s after the holder was killed", withUnit(m.Median, m.Unit))
		var others []string
		for _, c := range []string{redis, redlock} {
			if x, ok := f.row("handover", c, "crash", "p50"); ok {
				others = append(others, fmt.Sprintf("%s %s", c, withUnit(x.Median, x.Unit)))
			}
		}
		if len(others) > 0 {
			line += "; with " + strings.Join(others, ", ") + " (a crashed holder's key stays until its TTL expires)"
		}
		measured = append(measured, line+". If a crashed worker must not stall others for a TTL, this is the figure that matters.")
	}
	if m, ok := f.row("handover", monolock, "graceful", "p50"); ok {
		line := fmt.Sprintf("Hot locks passed from worker to worker: after a release, monolock's waiter had the lock in a median %s (pushed)", withUnit(m.Median, m.Unit))
		var others []string
		for _, c := range []string{redis, redlock} {
			if x, ok := f.row("handover", c, "graceful", "p50"); ok {
				others = append(others, fmt.Sprintf("%s %s", c, withUnit(x.Median, x.Unit)))
			}
		}
		if len(others) > 0 {
			line += "; polling waiters: " + strings.Join(others, ", ")
		}
		measured = append(measured, line+".")
	}
	if v := f.fairnessVariant(); v != "" {
		// Polling faster buys handover speed with coordinator load.
		var trade []string
		for _, c := range f.locks("fairness") {
			h, okH := f.row("handover", c, "graceful", "p50")
			o, okO := f.row("fairness", c, v, "server_ops_per_sec")
			if okH && okO {
				trade = append(trade, fmt.Sprintf("%s %s after a release at %s on the coordinator", c, withUnit(h.Median, h.Unit), withUnit(o.Median, "1/s")))
			}
		}
		if len(trade) > 1 {
			measured = append(measured, "Waiting strategy (handover speed against coordinator load under contention): "+strings.Join(trade, "; ")+". A polling lock hands over faster only by asking the coordinator more often.")
		}
		var parts []string
		for _, c := range f.locks("fairness") {
			if x, ok := f.row("fairness", c, v, "jain_index"); ok {
				parts = append(parts, fmt.Sprintf("%s %s", c, num(x.Median)))
			}
		}
		if len(parts) > 0 {
			measured = append(measured, fmt.Sprintf(
				"Many clients queueing for one lock: Jain fairness index %s (1 = equal shares). Strict FIFO for monolock %s; quiet contention (no polling load on the coordinator) %s.",
				strings.Join(parts, ", "), verdictText(verdict["strict-fifo"]), verdictText(verdict["quiet-contention"])))
		}
	}
	if len(measured) > 0 {
		d.p("From this run's numbers:")
		d.add(list{items: measured})
	} else {
		d.p("This run has too few figures for measured advice.")
	}
	d.p("Known trade-offs that this kind of run does not measure (from the design of each system, not from these numbers):")
	d.add(list{items: []string{
		"Availability: Redlock keeps granting locks while a majority (3 of 5) of its masters is up, so it survives the loss of a master. monolock is a single point of coordination: while its server is down no new grant is possible, and a restart loses queue positions (fencing tokens keep increasing). A single Redis is a single point as well. If the lock service must ride out a server loss without a gap, prefer Redlock or put a standby behind monolock's address.",
		"Correctness under pauses: monolock hands out fencing tokens with every grant and its client gives up the lock before the server can expire it; Redis SET NX and Redlock return no token by themselves, so a paused holder can write after its TTL. Use tokens wherever the protected resource can check them.",
		"Operations: Redis SET NX needs nothing new if Redis is already run; Redlock needs five independent masters; monolock is one more service (one static binary, standard library only, Prometheus metrics, an admin API to list holders and waiters and to force-release).",
	}})
}

func verdictText(v Verdict) string {
	switch v {
	case Holds:
		return "holds in this run"
	case Fails:
		return "fails in this run"
	}
	return "is inconclusive in this run"
}
