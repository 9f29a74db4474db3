package check

import (
	"cmp"
	"fmt"
	"slices"
)

// LostUpdates is the lost-update checker's verdict for one store's
// counter.
type LostUpdates struct {
	Valid Validity `json:"valid"`
	Store string   `json:"store"`
	// Acknowledged counts the increments that completed OK and accepted;
	// Unknown those whose outcome is unknown (they may have applied).
	Acknowledged int `json:"acknowledged"`
	Unknown      int `json:"unknown"`
	// Final is the counter's value at the history's last ReadCounter OK
	// on the store; nil without one (the verdict is then unknown).
	Final *int64 `json:"final,omitempty"`
	// Lost is the larger of Acknowledged − Final and Findings.Count: both
	// are lower bounds of the acknowledged increments whose effect is
	// missing (increments of unknown outcome may have made up for some).
	Lost int `json:"lost"`
	// Phantom says Final exceeds Acknowledged + Unknown: the counter grew
	// by more than any increment could have made it.
	Phantom bool `json:"phantom,omitempty"`
	// Findings counts the duplicate increments: acknowledged increments
	// that wrote a value an earlier acknowledged increment had written (a
	// serial run writes 1, 2, 3, … once each), each attributed to the
	// faults on either incrementing client or on a server active from the
	// first one's invocation to its own completion.
	// When only the final value shows a loss, First is the final read.
	Findings
}

// CheckLostUpdates checks the store's counter, which starts at 0 and is
// incremented by read-then-write (Jepsen's counter idea): the final value
// must lie within [Acknowledged, Acknowledged + Unknown], and no two
// acknowledged increments may write the same value.
func CheckLostUpdates(h *History, store string) LostUpdates {
	l := LostUpdates{Store: store, Findings: newFindings()}
	var acked []Operation
	final := -1 // index into h.Events of the last ReadCounter OK
	for _, op := range h.Ops {
		if op.Invoke.Store != store {
			continue
		}
		switch {
		case op.Invoke.F == Increment && op.Accepted():
			acked = append(acked, op)
		case op.Invoke.F == Increment && op.Outcome() == Info:
			l.Unknown++
		case op.Invoke.F == ReadCounter && op.Outcome() == OK:
			if final < 0 || op.DoneIndex > final {
				final = op.DoneIndex
			}
		}
	}
	l.Acknowledged = len(acked)
	slices.SortStableFunc(acked, func(a, b Operation) int { return cmp.Compare(a.Done.T, b.Done.T) })
	wrote := map[int64]Operation{}
	for _, op := range acked {
		w := *op.Done.Wrote
		first, dup := wrote[w]
		if !dup {
			wrote[w] = op
			continue
		}
		what := fmt.Sprintf("%s's acknowledged increment wrote %d, which %s's acknowledged increment had already written: one of them is lost",
			op.Invoke.Process, w, first.Invoke.Process)
		from := min(first.Invoke.T, op.Invoke.T)
		blamed := faultsBlamed(h, cause{from: from, to: op.Done.T, clients: map[string]Mono{first.Invoke.Process: from, op.Invoke.Process: from}})
		l.add(h, op.Done.T, blamed, what, first.Index, first.DoneIndex, op.Index, op.DoneIndex)
	}
	l.Lost = l.Count
	if final < 0 {
		l.Valid = Unknown
		if l.Count > 0 {
			l.Valid = Invalid
		}
		return l
	}
	f := *h.Events[final].Read
	l.Final = &f
	if missing := int64(l.Acknowledged) - f; missing > int64(l.Lost) {
		l.Lost = int(missing)
		if l.First == nil {
			l.First = &Violation{
				At:      h.Events[final].T,
				What:    fmt.Sprintf("the counter ends at %d, but %d increments were acknowledged", f, l.Acknowledged),
				Excerpt: excerpt(h, final),
			}
		}
	}
	l.Phantom = f > int64(l.Acknowledged+l.Unknown)
	if l.Phantom && l.First == nil {
		l.First = &Violation{
			At:      h.Events[final].T,
			What:    fmt.Sprintf("the counter ends at %d, above the %d acknowledged and %d unknown increments", f, l.Acknowledged, l.Unknown),
			Excerpt: excerpt(h, final),
		}
	}
	if l.Lost > 0 || l.Phantom {
		l.Valid = Invalid
	} else {
		l.Valid = Valid
	}
	return l
}
