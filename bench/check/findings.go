package check

import (
	"slices"
	"strings"
)

// excerptRadius is how many events an excerpt shows on each side of an
// event of the violation.
const excerptRadius = 2

// Violation is one violation a checker found: what it is, when it showed,
// the faults it is attributed to and the history around it.
type Violation struct {
	// At is when the violation showed (an overlap's start, a stale
	// write's invocation, a duplicate increment's completion).
	At   Mono   `json:"at"`
	What string `json:"what"`
	// Faults are the ids of the applied faults active during the
	// violation's cause window (each checker says which window).
	Faults []int64 `json:"faults,omitempty"`
	// Excerpt is the events of the violation, marked, with a few events
	// of every process on each side.
	Excerpt []Line `json:"excerpt"`
}

// Line is one event of an excerpt.
type Line struct {
	Event
	// Mark says the event is part of the violation.
	Mark bool `json:"mark,omitempty"`
	// Elided counts the events left out before this line.
	Elided int `json:"elided,omitempty"`
}

// Findings is what a checker counted: its violations, the first one, and
// how many are attributed to each applied fault (by FaultSpan.ID), to
// each fault kind, or to none.
type Findings struct {
	Count int        `json:"count"`
	First *Violation `json:"first,omitempty"`
	// ByFault counts the violations attributed to each fault; ByKind
	// those attributed to at least one fault of each kind; Unattributed
	// those during no fault.
	ByFault      map[int64]int  `json:"by_fault,omitempty"`
	ByKind       map[string]int `json:"by_kind,omitempty"`
	Unattributed int            `json:"unattributed"`
}

func newFindings() Findings { return Findings{ByFault: map[int64]int{}, ByKind: map[string]int{}} }

// add counts a violation that showed at at, attributed to the faults
// blamed, made of the events at the indexes events (-1 for none), and
// returns it.
func (f *Findings) add(h *History, at Mono, blamed []int64, what string, events ...int) Violation {
	f.Count++
	kinds := map[string]bool{}
	for _, id := range blamed {
		f.ByFault[id]++
		kinds[h.fault(id).Fault.Kind] = true
	}
	for k := range kinds {
		f.ByKind[k]++
	}
	if len(blamed) == 0 {
		f.Unattributed++
	}
	v := Violation{At: at, What: what, Faults: blamed, Excerpt: excerpt(h, events...)}
	if f.First == nil || at < f.First.At {
		f.First = &v
	}
	return v
}

// cause is a violation's cause window: a fault on a server (a fault not
// of a client kind whose target is no client process of the history: a
// server, its clock) is blamed when it was active at some time in [from,
// to]; a fault on a client only when the client is one of clients, active
// at some time from the client's own start there to to. A fault on
// another client leaves the clients involved and the servers they share
// alone.
type cause struct {
	from, to Mono
	clients  map[string]Mono
}

// faultsBlamed returns the ids of the applied faults c blames.
func faultsBlamed(h *History, c cause) []int64 {
	processes := h.processes()
	var ids []int64
	for _, f := range h.Faults {
		from := c.from
		if strings.HasPrefix(f.Fault.Kind, "client-") || slices.Contains(processes, f.Fault.Target) {
			start, involved := c.clients[f.Fault.Target]
			if !involved {
				continue
			}
			from = start
		}
		if f.From <= c.to && f.To >= from {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// fault returns the applied fault with the id.
func (h *History) fault(id int64) FaultSpan {
	for _, f := range h.Faults {
		if f.ID == id {
			return f
		}
	}
	return FaultSpan{}
}

// excerpt returns the events at the indexes marked, with excerptRadius
// events on each side of each, in time order.
func excerpt(h *History, marked ...int) []Line {
	var idx []int
	for _, i := range marked {
		if i >= 0 && i < len(h.Events) {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	var lines []Line
	next := 0 // first event not yet shown or elided
	for k, i := range idx {
		from := max(i-excerptRadius, next)
		to := min(i+excerptRadius, len(h.Events)-1)
		if k+1 < len(idx) {
			to = min(to, idx[k+1]-1)
		}
		elided := from - next
		if len(lines) == 0 {
			elided = 0 // what precedes the excerpt is not a gap in it
		}
		for j := from; j <= to; j++ {
			l := Line{Event: h.Events[j], Mark: j == i}
			if j == from {
				l.Elided = elided
			}
			lines = append(lines, l)
		}
		next = to + 1
	}
	return lines
}
