package load

import (
	"container/heap"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The figures of a Log. Every one is computed from the events; none is
// kept on the side while the run goes.

// Tally counts the measured requests of a log by outcome. Requests =
// Granted + Failed + Censored + Unstarted: every measured request is
// accounted for.
type Tally struct {
	Requests, Granted, Failed, Censored, Unstarted int64
	// GrantedInWindow are the granted ones whose grant came before the
	// window's end: what the lock achieved within it.
	GrantedInWindow int64
	// GaveUp is the part of Failed that gave up on its own; Cut the holds
	// the stop ended early; Lost the grants whose lock was lost before
	// Release; ReleaseFailed the Releases that returned an error.
	GaveUp, Cut, Lost, ReleaseFailed int64
}

// Tally counts the measured requests.
func (l *Log) Tally() Tally {
	var t Tally
	for _, e := range l.Events {
		if !e.Measured {
			continue
		}
		t.Requests++
		switch e.Outcome {
		case Granted:
			t.Granted++
			if e.Grant < l.End {
				t.GrantedInWindow++
			}
		case Failed:
			t.Failed++
		case Censored:
			t.Censored++
		case Unstarted:
			t.Unstarted++
		}
		t.GaveUp += b2i(e.GaveUp)
		t.Cut += b2i(e.Cut)
		t.Lost += b2i(e.Lost)
		t.ReleaseFailed += b2i(e.ReleaseFailed)
	}
	return t
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Span is the length of the window.
func (l *Log) Span() time.Duration { return l.End - l.Start }

// EdgeSpan is the time between the two edge reads: what their CPU and
// counter differences cover.
func (l *Log) EdgeSpan() time.Duration { return l.Edges[WindowEnd] - l.Edges[WindowStart] }

// GrantsBetween counts the grants of every request, measured or not,
// that came in [from, to): the locks a span's CPU was spent on.
func (l *Log) GrantsBetween(from, to time.Duration) int64 {
	var n int64
	for _, e := range l.Events {
		if e.Outcome == Granted && e.Grant >= from && e.Grant < to {
			n++
		}
	}
	return n
}

// BacklogAt counts the requests intended before t that had neither their
// grant nor their failure by t: what a window opening at t inherits. The
// grants of a window are at most its requests and this backlog.
func (l *Log) BacklogAt(t time.Duration) int64 {
	var n int64
	for _, e := range l.Events {
		if e.Intended >= t {
			continue
		}
		switch e.Outcome {
		case Granted:
			if e.Grant >= t {
				n++
			}
		case Failed, Censored:
			if e.Ended >= t {
				n++
			}
		}
	}
	return n
}

// record adds d to h, at least its lowest value.
func record(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(max(int64(d), histLowest))
}

// FromIntended returns the acquire latency of the measured requests from
// their intended start, in ns: the grant minus the intended start, and
// for a request censored or never started its lower bound, the stop
// minus its intended start, so that a backlog is not hidden (coordinated
// omission corrected). Failures are left out: they are counted.
func (l *Log) FromIntended() *hdrhistogram.Histogram {
	h := NewHistogram()
	for _, e := range l.Events {
		switch {
		case !e.Measured:
		case e.Outcome == Granted:
			record(h, e.Grant-e.Intended)
		case e.Outcome == Censored || e.Outcome == Unstarted:
			record(h, e.Ended-e.Intended)
		}
	}
	return h
}

// FromCall returns the acquire latency of the measured requests from the
// call, in ns (censored waits at their lower bound; requests never
// started have none).
func (l *Log) FromCall() *hdrhistogram.Histogram {
	h := NewHistogram()
	for _, e := range l.Events {
		switch {
		case !e.Measured:
		case e.Outcome == Granted:
			record(h, e.Grant-e.Call)
		case e.Outcome == Censored:
			record(h, e.Ended-e.Call)
		}
	}
	return h
}

// Recorder returns the closed-loop figures of the measured requests as a
// Recorder: acquire is call → grant, cycle call → Release returned, a
// cycle is a grant released without error; failures count failed
// acquires and releases. Censored waits are left out: the harness
// stopped them, the lock did not fail.
func (l *Log) Recorder() *Recorder {
	rec := NewRecorder()
	for _, e := range l.Events {
		if !e.Measured {
			continue
		}
		switch e.Outcome {
		case Granted:
			record(rec.Acquire, e.Grant-e.Call)
			if e.Lost {
				rec.Lost++
			}
			if e.ReleaseFailed {
				rec.Failures++
				continue
			}
			record(rec.Cycle, e.Release-e.Call)
			rec.Cycles++
		case Failed:
			rec.Failures++
			if e.GaveUp {
				rec.GaveUp++
			}
		}
	}
	for _, msg := range l.Errors {
		rec.noteError(msg)
	}
	return rec
}

// exit is when a request left its key: its release, or the end of a
// wait that got no lock.
func (e Event) exit() time.Duration {
	if e.Outcome == Granted {
		return e.Release
	}
	return e.Ended
}

// ContendedWaits returns the waits (grant − call, in ns; a censored wait
// at its lower bound) of the measured requests whose key another request
// held or waited for when they called: the waits the lock's queueing or
// polling decides. Every request of the log counts as a holder or
// waiter, measured or not.
func (l *Log) ContendedWaits() *hdrhistogram.Histogram {
	h := NewHistogram()
	for _, evs := range l.byKey(func(a, b Event) int { return cmpDuration(a.Call, b.Call) }) {
		var busy exits // exits of the key's requests that called before
		for _, e := range evs {
			for len(busy) > 0 && busy[0] <= e.Call {
				heap.Pop(&busy)
			}
			if len(busy) > 0 && e.Measured {
				switch e.Outcome {
				case Granted:
					record(h, e.Grant-e.Call)
				case Censored:
					record(h, e.Ended-e.Call)
				}
			}
			heap.Push(&busy, e.exit())
		}
	}
	return h
}

// Handovers returns, for every grant in [from, to) that followed another
// grant of its key while it waited (it called before that one's
// release), its grant minus that release: how fast the lock passed on.
// Grants count by when they came, not by when their request did: a key
// whose queue outlasts the window (one leader, many candidates) still
// shows its handovers. A value is negative when the grant came before
// the holder's Release returned (a server that grants the next waiter as
// it releases).
func (l *Log) Handovers(from, to time.Duration) []time.Duration {
	var out []time.Duration
	for _, evs := range l.byKey(func(a, b Event) int { return cmpDuration(a.Grant, b.Grant) }) {
		var prev *Event
		for i := range evs {
			e := &evs[i]
			if e.Outcome != Granted {
				continue
			}
			if prev != nil && e.Grant >= from && e.Grant < to && e.Call < prev.Release {
				out = append(out, e.Grant-prev.Release)
			}
			prev = e
		}
	}
	return out
}

// byKey groups the started requests by key, each group sorted by cmp.
func (l *Log) byKey(cmp func(a, b Event) int) [][]Event {
	groups := map[int][]Event{}
	for _, e := range l.Events {
		if e.Outcome != Unstarted {
			groups[e.Key] = append(groups[e.Key], e)
		}
	}
	keys := make([]int, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([][]Event, len(keys))
	for i, k := range keys {
		out[i] = groups[k]
		slices.SortStableFunc(out[i], cmp)
	}
	return out
}

// exits is a min-heap of stamps.
type exits []time.Duration

func (h exits) Len() int           { return len(h) }
func (h exits) Less(i, j int) bool { return h[i] < h[j] }
func (h exits) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *exits) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *exits) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
