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
	// asked is when the client invoked the acquire that granted it;
	// fromIdx and toIdx index the events that began and ended it in
	// History.Events.
	asked          Mono
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
	asked := map[string]Mono{} // process → its latest acquire's invocation
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
			asked[e.Process] = e.T
		case e.F == Acquire && e.Type == OK:
			closeAt(e.Process, i, EndedAcquire) // cannot happen with one operation at a time
			open[e.Process], latest[e.Process] = len(holds), len(holds)
			holds = append(holds, Hold{Process: e.Process, Token: e.Token, From: e.T, asked: asked[e.Process], fromIdx: i})
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
	// FirstPaused says the earlier holder was frozen by a client pause
	// through the overlap (see pausedThrough): it could learn nothing, so
	// the overlap is inherent to any lease; only a fencing token keeps its
	// late writes out. Otherwise it ran while another was granted the
	// lock: a failure of the lock (or its client) to end its belief first.
	FirstPaused bool `json:"first_paused"`
}

// KindClientPause is the fault kind that freezes a client process
// (SIGSTOP) until the fault ends (SIGCONT).
const KindClientPause = "client-pause"

// ResumeGrace is how long a client resumed from a pause may take to end
// its belief (its lost notice or its release) with the overlap still
// counted as the pause's: a resumed process first has to be scheduled and
// run its timers. The reference run's (20261202T004719Z) clients all did
// within 1.3 ms of the pause's end.
const ResumeGrace = 20 * time.Millisecond

// Exclusion is the mutual-exclusion checker's verdict.
type Exclusion struct {
	Valid Validity `json:"valid"`
	// Holds counts the holds; Findings counts the overlapping pairs.
	Holds int `json:"holds"`
	Findings
	// Running counts the overlapping pairs whose earlier holder was not
	// frozen through the overlap (FirstPaused false), and FirstRunning is
	// the first of them: the overlaps a lock can be blamed for.
	Running      int        `json:"running"`
	FirstRunning *Violation `json:"first_running,omitempty"`
	// RunningByFault counts the running overlaps attributed to each
	// applied fault (by FaultSpan.ID), as Findings.ByFault does for all.
	RunningByFault map[int64]int `json:"running_by_fault,omitempty"`
	// Overlapped is the time in which two or more clients believed they
	// held the lock (a three-way overlap counts once).
	Overlapped time.Duration `json:"overlapped_ns"`
	// Overlaps lists the overlapping pairs in order of From.
	Overlaps []Overlap `json:"overlaps,omitempty"`
}

// CheckExclusion finds the intervals in which two clients both believed
// they held the lock (see Hold). Touching holds (one's release invoked at
// the very time another's grant completed) do not overlap. Each overlap
// says whether the earlier holder was frozen through it (FirstPaused).
// The cause comes before the overlap shows, and a fault on a third client
// leaves these two alone: an overlap whose earlier holder was frozen
// through it is attributed to the pauses that froze it (they explain it
// alone: a pause outlasts the lease); another to the faults active up to
// the later grant on a server (from the earlier grant), on the earlier
// holder (from its acquire's invocation) or on the later one (from its
// own: a waiter frozen while it was promoted is granted late).
func CheckExclusion(h *History) Exclusion {
	holds := Holds(h)
	x := Exclusion{Valid: Valid, Holds: len(holds), Findings: newFindings(), RunningByFault: map[int64]int{}}
	type found struct {
		Overlap
		pauses []int64
	}
	var all []found
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
			pauses := pausedThrough(h, a.Process, b.From, to)
			all = append(all, found{Overlap{First: a, Second: b, From: b.From, To: to, FirstPaused: len(pauses) > 0}, pauses})
		}
	}
	slices.SortStableFunc(all, func(a, b found) int { return cmp.Compare(a.From, b.From) })
	for _, o := range all {
		x.Overlaps = append(x.Overlaps, o.Overlap)
		what := fmt.Sprintf("%s was granted the lock%s while %s still believed it held it%s, for %v",
			o.Second.Process, tokenText(o.Second.Token), o.First.Process, tokenText(o.First.Token), time.Duration(o.To-o.From))
		blamed := o.pauses
		if o.FirstPaused {
			what += fmt.Sprintf(" (%s was frozen by a client pause)", o.First.Process)
		} else {
			what += fmt.Sprintf(" (%s was running)", o.First.Process)
			blamed = faultsBlamed(h, cause{from: o.First.From, to: o.From, clients: map[string]Mono{o.First.Process: o.First.asked, o.Second.Process: o.Second.asked}})
		}
		v := x.add(h, o.From, blamed, what, o.First.fromIdx, o.Second.fromIdx, o.First.toIdx, o.Second.toIdx)
		if !o.FirstPaused {
			x.Running++
			for _, id := range blamed {
				x.RunningByFault[id]++
			}
			if x.FirstRunning == nil {
				x.FirstRunning = &v
			}
		}
	}
	x.Overlapped = unionLength(x.Overlaps)
	if x.Count > 0 {
		x.Valid = Invalid
	}
	return x
}

// pausedThrough returns the ids of the client pauses of process that
// froze it from from to to (joined where they overlap or touch), give or
// take ResumeGrace at the end; nil when it was running at some time in
// between. A pause freezes from when the process was seen stopped, when
// the history says (FaultSpan.frozen), not from the start line.
func pausedThrough(h *History, process string, from, to Mono) []int64 {
	var spans []FaultSpan
	for _, f := range h.Faults {
		if f.Fault.Kind == KindClientPause && f.Fault.Target == process {
			f.From, f.To = f.frozen()
			spans = append(spans, f)
		}
	}
	slices.SortStableFunc(spans, func(a, b FaultSpan) int { return cmp.Compare(a.From, b.From) })
	var ids []int64 // the joined span that holds from, while it is extended
	var end Mono
	for _, s := range spans {
		switch {
		case ids != nil && s.From <= end:
			end = max(end, s.To)
			if s.To >= from {
				ids = append(ids, s.ID)
			}
		case ids == nil && s.From <= from && from <= s.To:
			ids, end = []int64{s.ID}, s.To
		}
	}
	if ids == nil || to > end+Mono(ResumeGrace) {
		return nil
	}
	slices.Sort(ids)
	return ids
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
