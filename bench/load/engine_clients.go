package load

import (
	"context"
	"errors"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/workload"
)

// client runs one client until the run stops (or its Steps are done) and
// returns its events.
func (r *run) client(c int) []Event {
	if r.t.Schedule != nil {
		return r.openClient(c)
	}
	return r.closedClient(c)
}

func (r *run) openClient(c int) []Event {
	var events []Event
	l := r.t.Locker(c)
	for !r.stopped() {
		q, measured := r.take()
		if d := q.Due - r.since(); d > 0 {
			_ = bench.Sleep(r.stop, d)
		}
		if r.stopped() {
			if measured {
				events = append(events, r.unstarted(c, q, measured))
			}
			break
		}
		e := r.request(l, c, q.Key, q.Index, q.Hold, q.Due, measured)
		events = append(events, e)
	}
	return events
}

func (r *run) closedClient(c int) []Event {
	var events []Event
	l := r.t.Locker(c)
	plan := r.t.Plan(c)
	steps := 0 // measured steps done
	first := true
	defer func() {
		if r.t.Steps > 0 {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.left--; r.left == 0 {
				close(r.done)
			}
		}
	}()
	intended := max(0, r.since()) // a shared epoch may lie ahead
	for i := int64(0); ; i++ {
		s := plan.Next()
		measured := r.expect(intended)
		if d := intended - r.since(); d > 0 {
			_ = bench.Sleep(r.stop, d)
		}
		if r.stopped() {
			if measured {
				q := workload.Request{Index: i, Due: intended, Key: s.Key, Hold: s.Hold}
				events = append(events, r.unstarted(c, q, measured))
			}
			return events
		}
		e := r.request(l, c, s.Key, i, s.Hold, intended, measured)
		events = append(events, e)
		if first && e.Outcome != Censored {
			first = false
			r.warmed()
		}
		if measured && r.t.Steps > 0 {
			if steps++; steps == r.t.Steps {
				return events
			}
		}
		switch e.Outcome {
		case Granted:
			intended = e.Release + s.Think
		case Failed:
			intended = e.Ended + s.Think + failurePause
		default:
			return events
		}
	}
}

// unstarted records a measured request the run stopped before its start.
func (r *run) unstarted(c int, q workload.Request, measured bool) Event {
	r.mu.Lock()
	stopAt := r.stopAt
	r.mu.Unlock()
	return Event{Client: c, Key: q.Key, Index: q.Index, Hold: q.Hold, Intended: q.Due,
		Call: never, Grant: never, Release: never, Ended: stopAt, Outcome: Unstarted, Measured: measured}
}

// untaken records the measured requests of an open loop that no client
// took before the stop.
func (r *run) untaken(stopAt time.Duration) []Event {
	if r.t.Schedule == nil {
		return nil
	}
	var out []Event
	for q := r.peek; q.Due < r.end; q = r.draw() {
		if r.inWindow(q.Due) {
			out = append(out, Event{Client: -1, Key: q.Key, Index: q.Index, Hold: q.Hold, Intended: q.Due,
				Call: never, Grant: never, Release: never, Ended: stopAt, Outcome: Unstarted, Measured: true})
		}
	}
	return out
}

// request runs one acquire → hold → release on l.
func (r *run) request(l bench.Locker, c, key int, index int64, hold, intended time.Duration, measured bool) Event {
	e := Event{Client: c, Key: key, Index: index, Hold: hold, Intended: intended, Measured: measured,
		Grant: never, Release: never, Ended: never}
	name := r.t.Key(c, key)
	e.Call = r.since()
	h, err := l.Acquire(r.stop, name)
	now := r.since()
	r.settle(measured)
	if err != nil {
		e.Ended = now
		if stopped(r.stop) {
			e.Outcome = Censored
			return e
		}
		e.Outcome, e.GaveUp = Failed, errors.Is(err, bench.ErrGaveUp)
		r.noteError(err)
		return e
	}
	e.Grant, e.Outcome = now, Granted
	if hold > 0 {
		t := time.NewTimer(hold)
		select {
		case <-t.C:
		case <-r.stop.Done():
			e.Cut = true
		case <-h.Lost():
			e.Lost = true
		}
		t.Stop()
	}
	if !e.Lost {
		select {
		case <-h.Lost():
			e.Lost = true
		default:
		}
	}
	// Release even when the run stopped: the lock must not outlive the
	// client.
	if err := h.Release(context.WithoutCancel(r.ctx)); err != nil {
		e.ReleaseFailed = true
		r.noteError(err)
	}
	e.Release = r.since()
	return e
}

func cmpDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
