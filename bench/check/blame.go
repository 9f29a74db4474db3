package check

import (
	"fmt"
	"slices"
	"time"
)

// Blame says on whom a running overlap is laid, by the lock server's own
// record of its grants and lease ends (server events).
type Blame string

// Classes of running overlaps.
const (
	// BlameServer: the server granted the second holder before its own
	// record ended the first holder's hold, or ended the first holder's
	// lease before that lease could have run out by the last renewal the
	// server recorded (a clock step, a restart that forgot the key).
	BlameServer Blame = "server granted early"
	// BlameClient: the server ended the first lease on time and granted
	// after it, but the first holder learned of its loss after the
	// second grant.
	BlameClient Blame = "client learned late"
	// BlameBoth: the server ended the first lease early, and the first
	// holder still believed past the time that lease could have run out:
	// it would have overlapped an on-time grant too.
	BlameBoth Blame = "both"
	// BlameUnclassified: no server record covers the overlap (the
	// contender records none, the watch broke in between, or the grants
	// could not be matched to the record).
	BlameUnclassified Blame = "unclassified"
)

// GrantMatchSlack is how long after a client's grant completed the
// watcher may still see the server's grant when the record carries no
// token to match: the server's reply to the client and its notification
// to the watcher leave together but travel on different connections.
const GrantMatchSlack = 50 * time.Millisecond

// ExpiryTolerance is how much earlier than the remaining TTL read back
// at the last renewal a lease's recorded expiry may be seen and still
// count as on time: the TTL is read in whole milliseconds, after the
// change it follows.
const ExpiryTolerance = 5 * time.Millisecond

// BlamedOverlap is one running overlap and its class.
type BlamedOverlap struct {
	Overlap
	Blame Blame `json:"blame"`
	// Server names the server whose record decided, "" when unclassified.
	Server string `json:"server,omitempty"`
	// Why says what the record showed.
	Why string `json:"why"`
}

// Blames counts the running overlaps by class.
type Blames struct {
	// Recorded says the history has server events; without, every running
	// overlap is unclassified.
	Recorded     bool            `json:"recorded"`
	ServerEarly  int             `json:"server_early"`
	ClientLate   int             `json:"client_late"`
	Both         int             `json:"both"`
	Unclassified int             `json:"unclassified"`
	Overlaps     []BlamedOverlap `json:"overlaps,omitempty"`
}

// ClassifyOverlaps classifies each running overlap of x (FirstPaused
// false) by the server events of h. On each server that recorded the
// second holder's grant, the first holder's grant and the end of its
// hold are looked up (by token when the record has tokens, else the
// server's grant seen from the acquire's invocation to GrantMatchSlack
// after its completion, the one nearest the completion) and judged in
// the server's own order: no end before the second grant is the
// server's; an expiry seen more than ExpiryTolerance before the last
// recorded renewal's time plus its TTL read back is the server's (both,
// when the first holder still believed past that time); an end in time
// leaves the late notice to the client. A server whose watch broke in
// between does not decide; one server's early grant is enough to blame
// the servers (a Redlock minority among the masters that granted).
func ClassifyOverlaps(h *History, x Exclusion) Blames {
	records := serverRecords(h)
	b := Blames{Recorded: len(records) > 0}
	for _, o := range x.Overlaps {
		if o.FirstPaused {
			continue
		}
		bo := BlamedOverlap{Overlap: o, Blame: BlameUnclassified, Why: "no server record covers it"}
		for _, r := range records {
			blame, why, ok := r.classify(o)
			if !ok {
				continue
			}
			if bo.Blame == BlameUnclassified || rank(blame) > rank(bo.Blame) {
				bo.Blame, bo.Server, bo.Why = blame, r.name, why
			}
		}
		switch bo.Blame {
		case BlameServer:
			b.ServerEarly++
		case BlameClient:
			b.ClientLate++
		case BlameBoth:
			b.Both++
		default:
			b.Unclassified++
		}
		b.Overlaps = append(b.Overlaps, bo)
	}
	return b
}

// rank orders the classes one server may give so that a server's fault
// found on any server wins.
func rank(b Blame) int { return blameRank[b] }

var blameRank = map[Blame]int{BlameUnclassified: 0, BlameClient: 1, BlameServer: 2, BlameBoth: 3}

// serverRecord is the server events of one server, in its order.
type serverRecord struct {
	name   string
	events []Event
	tokens bool // its grants carry the grant's token
}

func serverRecords(h *History) []*serverRecord {
	var out []*serverRecord
	byName := map[string]*serverRecord{}
	for _, i := range h.ServerEvents {
		e := h.Events[i]
		r, ok := byName[e.Process]
		if !ok {
			r = &serverRecord{name: e.Process}
			byName[e.Process] = r
			out = append(out, r)
		}
		r.events = append(r.events, e)
		if e.F == ServerGrant && e.Token != nil {
			r.tokens = true
		}
	}
	return out
}

// grantOf returns the index of the server's grant of hold, or -1.
func (r *serverRecord) grantOf(hold Hold) int {
	if r.tokens && hold.Token != nil {
		return slices.IndexFunc(r.events, func(e Event) bool {
			return e.F == ServerGrant && e.Token != nil && *e.Token == *hold.Token
		})
	}
	// Nearest either side: the watcher may see the grant just after the
	// client's reply, and other clients' grants fall inside a long wait.
	best, bestGap := -1, Mono(0)
	for i, e := range r.events {
		if e.F != ServerGrant || e.T < hold.asked || e.T > hold.From+Mono(GrantMatchSlack) {
			continue
		}
		gap := max(e.T-hold.From, hold.From-e.T)
		if best < 0 || gap < bestGap {
			best, bestGap = i, gap
		}
	}
	return best
}

// classify judges overlap o on this server; ok is false when the server
// did not record both grants with an unbroken watch between them.
func (r *serverRecord) classify(o Overlap) (Blame, string, bool) {
	ga, gb := r.grantOf(o.First), r.grantOf(o.Second)
	if ga < 0 || gb < 0 || ga >= gb {
		return "", "", false
	}
	key := r.events[ga].Key
	lastRenewal := ga
	for i := ga + 1; i < gb; i++ {
		e := r.events[i]
		switch {
		case e.F == Unwatched:
			return "", "", false
		case e.Key != key:
		case e.F == ServerRenew:
			lastRenewal = i
		case e.F == ServerEnd:
			return r.judgeEnd(o, r.events[lastRenewal], e)
		}
	}
	return BlameServer, fmt.Sprintf("%s granted %s before its record ended %s's hold (no end of %s between the two grants)",
		r.name, o.Second.Process, o.First.Process, key), true
}

// judgeEnd judges an end recorded before the second grant: on time, or
// before the lease could have run out by the last renewal.
func (r *serverRecord) judgeEnd(o Overlap, renewal, end Event) (Blame, string, bool) {
	late := time.Duration(o.First.To - o.Second.From)
	if end.Cause == "expired" && renewal.TTLMS != nil {
		due := renewal.T + Mono(time.Duration(*renewal.TTLMS)*time.Millisecond)
		if end.T < due-Mono(ExpiryTolerance) {
			why := fmt.Sprintf("%s expired %s's lease %v before it could have run out (%d ms left when read back after its last renewal)",
				r.name, o.First.Process, time.Duration(due-end.T).Round(time.Millisecond), *renewal.TTLMS)
			if o.First.To > due {
				return BlameBoth, why + fmt.Sprintf("; %s still believed %v past that time", o.First.Process, time.Duration(o.First.To-due).Round(time.Millisecond)), true
			}
			return BlameServer, why, true
		}
	}
	return BlameClient, fmt.Sprintf("%s ended %s's hold (%s) before granting %s; %s learned %v after that grant",
		r.name, o.First.Process, endCause(end), o.Second.Process, o.First.Process, late.Round(time.Millisecond)), true
}

func endCause(e Event) string {
	if e.Cause == "" {
		return "cause not told"
	}
	return e.Cause
}
