package report

import (
	"fmt"
	"slices"
)

// glossary are the terms a reader meets in the report, in the order a
// reader meets them.
var glossary = []struct{ term, meaning string }{
	{"p50, p99", "the median and the 99th percentile of a set of timings: half of them, or 99 in 100, were at most this long."},
	{"~ (tie)", "figures that this run cannot tell apart: the ranges of their repetitions overlap and no Mann-Whitney U-test finds them different, or their medians differ by less than 5%; with one repetition only a 2× difference counts. Figures share a place only when no two of them can be told apart."},
	{"noise", "a figure whose repetitions spread wider than its median: shown with its range, never ranked."},
	{"w1, w64", "a variant with 1 or 64 concurrent workers (clients taking locks)."},
	{"distinct-w64, shared-w16", "64 workers each on its own lock key (no contention), or 16 workers sharing a small set of keys (contention)."},
	{"floor", "the same exchange over the same network path with no lock logic at all (a bare TCP round trip, or the same store command without the lock): what the bench and the path cost by themselves. A lock cannot beat the floor of its kind unless it saves a step the floor pays (a connection dialled in advance, or TFO's handshake)."},
	{"lease (TTL)", "how long a lock stays granted to a holder that stops renewing it; the same for every contender in a run."},
	{"handover", "the time from a holder stopping (release, crash or freeze) to the next waiter's grant."},
	{"unavailable", "the longest stretch without a grant around a fault, from the last grant before it to the first after it: the one figure the failover section calls unavailability (its empty 100-ms steps are another figure, said as such)."},
	{"fencing token", "a number that grows with every grant; a store that remembers the highest token it saw rejects a write from a holder whose lock has been passed on (a stale write)."},
	{"learn-first margin", "how long before the next grant a holder that lost its lock (its host cut off) learned of the loss; negative means it learned after another holder was granted, a window for two writers."},
	{"Jain index", "the fairness of the grants among clients: 1 when every client got the same number, 1/n when one client got all."},
	{"FIFO inversion", "a grant that overtook an earlier pending request: 0 per 1,000 grants is strict first-in, first-out order."},
	{"coordinated omission", "the error of a load generator that waits for slow replies before sending the next request and so never measures the requests a stall delayed; open-loop variants send on a fixed schedule and time each request from its scheduled start to avoid it."},
	{"TFO", "TCP Fast Open: the client sends its first request inside the connection's SYN, saving the handshake's round trip on a new connection (the bare TCP floor pays it)."},
	{"min–max, n", "the range across the run's repetitions and their number; a difference inside it is not a ranking."},
}

// glossaryList lists the terms, in the appendix (report.md links to it).
func (f *figures) glossaryList(d *document) {
	items := make([]string, len(glossary))
	for i, g := range glossary {
		items[i] = g.term + ": " + g.meaning
	}
	d.add(list{items: items})
}

// terms are the words of report.md a reader cannot guess, each in one
// line; the glossary in the appendix says more.
var terms = []string{
	"~: a tie, figures this run cannot tell apart; n: the repetitions behind a figure, min–max their range.",
	"w1, w8: 1 or 8 concurrent workers; n8: 8 clients on one hot lock.",
	"floor: the same exchange with no lock logic: what the bench and the path cost by themselves.",
	"learn-first margin: how long before the next grant a holder cut off from its server learned its loss; negative: after.",
	"D: a standby's detection and switch; promotion: a release to the next queued waiter's grant.",
}

// shortGlossary closes report.md with the capability ids and the terms,
// one line each.
func (f *figures) shortGlossary(d *document) {
	items := slices.Clone(terms)
	if n := len(f.a.MatrixIDs()); n > 0 {
		items = append([]string{fmt.Sprintf("C1–C%d: the capability matrix's columns, defined above it.", n)}, items...)
	}
	d.h2("Terms")
	d.add(list{items: items})
}
