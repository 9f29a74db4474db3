package check

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// How a Hold ended.
const (
	EndedRelease = "release"     // the client invoked release
	EndedLost    = "lost"        // the client got its lost notice
	EndedAcquire = "acquire"     // the client invoked its next acquire without either
	EndedHistory = "history end" // neither happened before the client's last event
)

// Hold is a stretch in which one client believed it held the lock: from
// the completion of its granted acquire to the invocation of its release,
// its lost notice, or the invocation of its next acquire, whichever came
// first. A client that did none of these (it crashed, or the history
// ended) is taken to believe only up to its last recorded event: it may
// have believed longer, so overlaps can only be undercounted. An acquire
// that is pending, failed or of unknown outcome is no hold: the client
// never believed it was granted.
type Hold struct {
	Process string  `json:"process"`
	Token   *uint64 `json:"token,omitempty"`
	From    Mono    `json:"from"`
	To      Mono    `json:"to"`
	Ended   string  `json:"ended"`
	// fromIdx and toIdx index the events that began and ended it in
	// History.Events.
	fromIdx, toIdx int
	// movedOn is when the client invoked its release or next acquire
	// after the hold (0 if it never did), also when a lost notice had
	// ended the hold before.
	movedOn Mono
}

// Holds returns every hold of the history, in order of From.
func Holds(h *History) []Hold {
	var holds []Hold
	open := map[string]int{}   // process → index into holds
	latest := map[string]int{} // process → index of its latest hold
	last := map[string]int{}   // process → index of its last event
	closeAt := func(p string, i int, why string) {
		if j, ok := open[p]; ok {
			holds[j].To, holds[j].toIdx, holds[j].Ended = h.Events[i].T, i, why
			delete(open, p)
		}
	}
	for i, e := range h.Events {
		if e.F == FuncFault {
			continue
		}
		last[e.Process] = i
		if j, ok := latest[e.Process]; ok && e.Type == Invoke && (e.F == Release || e.F == Acquire) && holds[j].movedOn == 0 {
			holds[j].movedOn = e.T
		}
		switch {
		case e.F == Acquire && e.Type == Invoke:
			closeAt(e.Process, i, EndedAcquire)
		case e.F == Acquire && e.Type == OK:
			closeAt(e.Process, i, EndedAcquire) // cannot happen with one operation at a time
			open[e.Process], latest[e.Process] = len(holds), len(holds)
			holds = append(holds, Hold{Process: e.Process, Token: e.Token, From: e.T, fromIdx: i})
		case e.F == Release && e.Type == Invoke:
			closeAt(e.Process, i, EndedRelease)
		case e.Type == Notice:
			closeAt(e.Process, i, EndedLost)
		}
	}
	for p := range open {
		closeAt(p, last[p], EndedHistory)
	}
	slices.SortStableFunc(holds, func(a, b Hold) int { return cmp.Compare(a.From, b.From) })
	return holds
}

// Overlap is two clients' holds intersecting: both believed they held the
// lock from From to To.
type Overlap struct {
	First  Hold `json:"first"`
	Second Hold `json:"second"`
	From   Mono `json:"from"`
	To     Mono `json:"to"`
}

// Exclusion is the mutual-exclusion checker's verdict.
type Exclusion struct {
	Valid Validity `json:"valid"`
	// Holds counts the holds; Findings counts the overlapping pairs.
	Holds int `json:"holds"`
	Findings
	// Overlapped is the time in which two or more clients believed they
	// held the lock (a three-way overlap counts once).
	Overlapped time.Duration `json:"overlapped_ns"`
	// Overlaps lists the overlapping pairs in order of From.
	Overlaps []Overlap `json:"overlaps,omitempty"`
}

// CheckExclusion finds the intervals in which two clients both believed
// they held the lock (see Hold). Touching holds (one's release invoked at
// the very time another's grant completed) do not overlap. A violation
// is attributed to the faults active from the start of the earlier hold
// to the end of the overlap: the cause comes before the overlap shows.
func CheckExclusion(h *History) Exclusion {
	holds := Holds(h)
	x := Exclusion{Valid: Valid, Holds: len(holds), Findings: newFindings()}
	for i, a := range holds {
		for _, b := range holds[i+1:] {
			if b.From >= a.To {
				break // sorted by From: no later hold starts inside a
			}
			if a.Process == b.Process {
				continue
			}
			to := min(a.To, b.To)
			if to <= b.From {
				continue
			}
			x.Overlaps = append(x.Overlaps, Overlap{First: a, Second: b, From: b.From, To: to})
		}
	}
	slices.SortStableFunc(x.Overlaps, func(a, b Overlap) int { return cmp.Compare(a.From, b.From) })
	for _, o := range x.Overlaps {
		what := fmt.Sprintf("%s was granted the lock%s while %s still believed it held it%s, for %v",
			o.Second.Process, tokenText(o.Second.Token), o.First.Process, tokenText(o.First.Token), time.Duration(o.To-o.From))
		x.add(h, o.From, o.First.From, o.To, what, o.First.fromIdx, o.Second.fromIdx, o.First.toIdx, o.Second.toIdx)
	}
	x.Overlapped = unionLength(x.Overlaps)
	if x.Count > 0 {
		x.Valid = Invalid
	}
	return x
}

// unionLength is the length of the union of the overlaps' intervals, which
// are sorted by From.
func unionLength(os []Overlap) time.Duration {
	var total time.Duration
	var from, to Mono
	for i, o := range os {
		if i == 0 || o.From > to {
			total += time.Duration(to - from)
			from, to = o.From, o.To
			continue
		}
		to = max(to, o.To)
	}
	return total + time.Duration(to-from)
}

func tokenText(t *uint64) string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf(" (token %d)", *t)
}
