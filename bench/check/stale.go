package check

import (
	"fmt"
	"slices"
	"time"
)

// StaleWrites is the stale-write checker's verdict for one store.
type StaleWrites struct {
	Valid Validity `json:"valid"`
	Store string   `json:"store"`
	// Writes counts the writes invoked on the store (register writes and
	// increments).
	Writes int `json:"writes"`
	// Findings counts the stale writes the store accepted.
	Findings
	// Rejected counts the stale writes the store rejected: what fencing
	// prevented. UnknownOutcome counts stale writes whose outcome is
	// unknown (they may have been accepted).
	Rejected       int `json:"rejected"`
	UnknownOutcome int `json:"unknown_outcome"`
	// AfterLost counts the writes under a hold (stale or not, accepted or
	// not) that left after the writer's lost notice: the notice came
	// between the client's last check and the write, or the client
	// ignored it. They are judged like the others (the store saw them all
	// the same).
	AfterLost int `json:"after_lost"`
	// Ungranted counts writes invoked by a client that held no grant at
	// the time (before any grant, or after its release): a bug of the
	// client, not of the lock; they are not judged.
	Ungranted int `json:"ungranted"`
	// RefusedHolder counts the writes of the current holder that the
	// store refused: made with a token under a hold that no newer grant
	// had superseded when the write left (and before the writer's lost
	// notice), yet rejected. A fenced store does this when the tokens went backwards
	// (a restarted server started them over): it locks the rightful holder
	// out. Attributed to the faults on a server or on the writer from the
	// invocation of the acquire that granted the hold to the write.
	RefusedHolder Findings `json:"refused_holder"`
}

// CheckStaleWrites finds the writes to store (Write and Increment) that
// were stale: a write by client C under C's hold H (C's latest grant
// before the invocation, not released before it; a lost notice before it
// does not end it here, see AfterLost), is stale when another client's
// grant newer than H's (see grantedAfter) had completed when the write
// left. A Write leaves at its invocation; an Increment's write leaves
// after its read and a wait, at its WriteT: a client frozen in between
// writes late. An Increment without WriteT (histories recorded before it
// existed, or a write never sent) is judged at its invocation, which
// misses exactly that case: such a history can show a lost increment
// while no stale write. A stale write the store accepted is a violation,
// attributed to the faults active up to the write on a server (from H's
// grant), on the writer (from the invocation of the acquire that granted
// H) or on the newer grant's holder (from its own acquire's invocation).
// A write with a token that was not stale and that the store refused,
// before the writer's lost notice, is counted in RefusedHolder. Valid when the store
// accepted no stale write; unknown when none was accepted but some
// outcomes are unknown.
func CheckStaleWrites(h *History, store string) StaleWrites {
	holds := Holds(h)
	byProcess := map[string][]Hold{}
	for _, hd := range holds {
		byProcess[hd.Process] = append(byProcess[hd.Process], hd)
	}
	restarts := serverRestarts(h)
	s := StaleWrites{Store: store, Findings: newFindings(), RefusedHolder: newFindings()}
	for _, op := range h.Ops {
		in := op.Invoke
		if in.Store != store || in.F != Write && in.F != Increment {
			continue
		}
		s.Writes++
		own, ok := holdAt(byProcess[in.Process], in.T)
		if !ok {
			s.Ungranted++
			continue
		}
		t := writeTime(op)
		afterLost := t > own.To
		if afterLost {
			s.AfterLost++
		}
		newer, ok := newerGrant(holds, restarts, own, t)
		if !ok {
			// A write without a token refused by a fenced store is the
			// contender's lack of tokens, not a lock-out.
			if !afterLost && in.Token != nil && op.Outcome() == OK && !op.Accepted() {
				what := fmt.Sprintf("store %s refused %s's %s%s although no grant newer than %s's had completed",
					store, in.Process, in.F, tokenText(in.Token), in.Process)
				blamed := faultsBlamed(h, cause{from: own.asked, to: t, clients: map[string]Mono{in.Process: own.asked}})
				s.RefusedHolder.add(h, t, blamed, what, own.fromIdx, op.Index, op.DoneIndex)
			}
			continue
		}
		switch {
		case op.Accepted():
			what := fmt.Sprintf("store %s accepted %s's %s%s although %s had been granted the lock%s since %s's grant",
				store, in.Process, in.F, tokenText(in.Token), newer.Process, tokenText(newer.Token), in.Process)
			if t != in.T {
				what += fmt.Sprintf(" (its write left %v after the invocation)", time.Duration(t-in.T))
			}
			blamed := faultsBlamed(h, cause{from: own.From, to: t, clients: map[string]Mono{in.Process: own.asked, newer.Process: newer.asked}})
			s.add(h, t, blamed, what, own.fromIdx, newer.fromIdx, op.Index, op.DoneIndex)
		case op.Outcome() == OK:
			s.Rejected++
		case op.Outcome() == Info:
			s.UnknownOutcome++
		}
	}
	switch {
	case s.Count > 0:
		s.Valid = Invalid
	case s.UnknownOutcome > 0:
		s.Valid = Unknown
	default:
		s.Valid = Valid
	}
	return s
}

// writeTime is when op's write left: an Increment's WriteT when recorded,
// else the invocation.
func writeTime(op Operation) Mono {
	if op.Done != nil && op.Done.WriteT != nil {
		return *op.Done.WriteT
	}
	return op.Invoke.T
}

// holdAt returns the hold among holds (one process's, by From) that a
// write at t is made under: the latest to start by t, if the client had
// not released it (nor invoked a new acquire) before t.
func holdAt(holds []Hold, t Mono) (Hold, bool) {
	for i := len(holds) - 1; i >= 0; i-- {
		if h := holds[i]; h.From <= t {
			return h, t <= h.To || h.Ended == EndedLost && (h.movedOn == 0 || t < h.movedOn)
		}
	}
	return Hold{}, false
}

// newerGrant returns the first hold of another process whose grant is
// newer than own's (see grantedAfter) and completed before t.
func newerGrant(holds []Hold, restarts []FaultSpan, own Hold, t Mono) (Hold, bool) {
	for _, o := range holds {
		if o.From >= t {
			break
		}
		if o.Process != own.Process && grantedAfter(restarts, own, o) {
			return o, true
		}
	}
	return Hold{}, false
}

// grantedAfter reports whether b's grant is newer than a's. Real time
// decides where it can: b's grant is newer when its acquire was invoked
// after a's grant completed, older when its acquire completed before
// a's was invoked. Tokens are the server's word and go backwards when a
// restarted server starts them over, so they only order grants whose
// acquires ran concurrently (a waiter frozen while it was promoted learns
// of its grant after the next holder's: its token, not its completion,
// says it is the older), and only when no server restart (restarts)
// came between the two acquires and the tokens differ. Otherwise the
// later completion is the newer grant.
func grantedAfter(restarts []FaultSpan, a, b Hold) bool {
	switch {
	case a.From < b.asked:
		return true
	case b.From < a.asked:
		return false
	}
	from, to := min(a.asked, b.asked), max(a.From, b.From)
	if a.Token != nil && b.Token != nil && *a.Token != *b.Token &&
		!slices.ContainsFunc(restarts, func(f FaultSpan) bool { return f.From <= to && f.To >= from }) {
		return *b.Token > *a.Token
	}
	return b.From > a.From
}

// KindServerKill is the fault kind that kills the lock's servers and
// restarts them: a restarted server may start its tokens over.
const KindServerKill = "server-kill"

// serverRestarts returns the server kills of h.
func serverRestarts(h *History) []FaultSpan {
	var spans []FaultSpan
	for _, f := range h.Faults {
		if f.Fault.Kind == KindServerKill {
			spans = append(spans, f)
		}
	}
	return spans
}
