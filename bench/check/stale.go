package check

import (
	"fmt"
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
	// AfterLost counts the stale writes (accepted or not) invoked after
	// the writer's lost notice: it checked its lock before the write and
	// the notice came in between, or it ignored the notice. They are
	// judged like the others (the store saw them all the same).
	AfterLost int `json:"after_lost"`
	// Ungranted counts writes invoked by a client that held no grant at
	// the time (before any grant, or after its release): a bug of the
	// client, not of the lock; they are not judged.
	Ungranted int `json:"ungranted"`
}

// CheckStaleWrites finds the writes to store (Write and Increment) that
// were stale: a write by client C under C's hold H (C's latest grant
// before the invocation, not released before it; a lost notice before it
// does not end it here, see AfterLost), is stale when another client's
// newer grant had completed when the write left (a newer grant existed
// when C wrote). A Write leaves at its invocation; an Increment's write
// leaves after its read and a wait, at its WriteT: a client frozen in
// between writes late. An Increment without WriteT (histories recorded
// before it existed, or a write never sent) is judged at its invocation,
// which misses exactly that case: such a history can show a lost
// increment while no stale write. When both grants carry tokens, newer
// means a higher token: a grant delivered late (a waiter frozen while it
// was promoted learns of its grant, long expired, after the next
// holder's) is older than it looks by its completion, and its writes are
// the stale ones. Without tokens, newer means completed after H's grant.
// A stale write the store accepted is a violation, attributed to the
// faults active up to the write on a server (from H's grant), on the
// writer (from the invocation of the acquire that granted H) or on the
// newer grant's holder (from its own acquire's invocation). Valid when the store accepted none;
// unknown when none was accepted but some outcomes are unknown.
func CheckStaleWrites(h *History, store string) StaleWrites {
	holds := Holds(h)
	byProcess := map[string][]Hold{}
	for _, hd := range holds {
		byProcess[hd.Process] = append(byProcess[hd.Process], hd)
	}
	s := StaleWrites{Store: store, Findings: newFindings()}
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
		newer, ok := newerGrant(holds, own, t)
		if !ok {
			continue
		}
		if t > own.To {
			s.AfterLost++
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
// newer than own's and completed before t: with tokens on both, a higher
// token; else a later completion.
func newerGrant(holds []Hold, own Hold, t Mono) (Hold, bool) {
	for _, o := range holds {
		if o.From >= t {
			break
		}
		if o.Process == own.Process {
			continue
		}
		if own.Token != nil && o.Token != nil {
			if *o.Token > *own.Token {
				return o, true
			}
			continue
		}
		if o.From > own.From {
			return o, true
		}
	}
	return Hold{}, false
}
