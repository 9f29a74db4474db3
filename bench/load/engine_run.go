package load

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/workload"
)

// run is the shared state of one Run.
type run struct {
	t     Traffic
	epoch time.Time
	// ctx is the caller's; stop ends when the run stops.
	ctx, stop context.Context

	mu sync.Mutex
	// start and end bound the window (MaxInt64 until WarmEachClient's
	// warm-up is over, or the last client finished its Steps).
	start, end time.Duration
	// peek is the open loop's next request no client has taken.
	peek workload.Request
	// pending counts measured requests taken and not yet granted or
	// failed.
	pending int
	// closed: the window has closed.
	closed   bool
	resolved chan struct{} // closed once closed, pending 0 and no measured request untaken
	isDone   bool
	// left counts the clients still running their Steps; done closes
	// when it reaches 0. cold counts the clients that have not finished a
	// request; warm closes when it reaches 0.
	left, cold int
	done, warm chan struct{}
	stopAt     time.Duration
	errors     []string
	logs       [][]Event
}

func (r *run) since() time.Duration { return time.Since(r.epoch) }

// inWindow reports whether a request intended at t belongs to the
// window. Called with mu held.
func (r *run) inWindow(t time.Duration) bool {
	if r.t.Steps > 0 {
		return t >= r.start
	}
	return t >= r.start && t < r.end
}

// draw returns the schedule's next request that Take keeps.
func (r *run) draw() workload.Request {
	for {
		q := r.t.Schedule.Next()
		if r.t.Take == nil || r.t.Take(q) {
			return q
		}
	}
}

// take hands the next scheduled request to a client.
func (r *run) take() (workload.Request, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.peek
	r.peek = r.draw()
	measured := r.inWindow(q.Due)
	if measured {
		r.pending++
	}
	return q, measured
}

// expect registers a closed-loop client's next request, intended at t,
// and reports whether it is measured.
func (r *run) expect(t time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	measured := r.inWindow(t)
	if measured {
		r.pending++
	}
	return measured
}

// warmed notes that a client finished its first request.
func (r *run) warmed() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cold--; r.cold == 0 {
		close(r.warm)
	}
}

// settle marks a measured request granted, failed or given up.
func (r *run) settle(measured bool) {
	if !measured {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending--
	r.checkResolved()
}

// checkResolved closes resolved once nothing measured is outstanding.
// Called with mu held.
func (r *run) checkResolved() {
	if r.isDone || !r.closed || r.pending > 0 {
		return
	}
	if r.t.Schedule != nil && r.peek.Due < r.end {
		return // measured requests no client has taken yet
	}
	r.isDone = true
	close(r.resolved)
}

func (r *run) noteError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = NoteError(r.errors, err.Error())
}

// coordinate keeps the run's timeline: the window's edges, its close,
// and the stop. It returns the log without its events.
func (r *run) coordinate(stop context.CancelFunc) (*Log, error) {
	t := r.t
	log := &Log{}
	edge := func(e Edge) error {
		log.Edges[e] = r.since()
		if t.Edge == nil {
			return nil
		}
		if err := t.Edge(r.ctx, e); err != nil {
			return fmt.Errorf("load: reading the window's %s: %w", map[Edge]string{WindowStart: "start", WindowEnd: "end"}[e], err)
		}
		return nil
	}
	if err := r.sleepUntil(t.Warmup); err != nil {
		return nil, err
	}
	if t.WarmEachClient {
		select {
		case <-r.warm:
		case <-r.ctx.Done():
			return nil, r.ctx.Err()
		}
		r.mu.Lock()
		// Just after now: every request decided before this lock has an
		// intended start up to now (WarmEachClient plans think 0).
		r.start = r.since() + 1
		if t.Steps == 0 {
			r.end = r.start + t.Window
		}
		r.mu.Unlock()
	}
	log.Start = r.start
	if err := edge(WindowStart); err != nil {
		return nil, err
	}
	if t.Steps > 0 {
		select {
		case <-r.done:
		case <-r.ctx.Done():
			return nil, r.ctx.Err()
		}
		r.mu.Lock()
		r.end = r.since()
		r.mu.Unlock()
	} else if err := r.sleepUntil(r.end); err != nil {
		return nil, err
	}
	log.End = r.end
	if err := edge(WindowEnd); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.closed = true
	r.checkResolved()
	r.mu.Unlock()
	grace := time.NewTimer(max(0, r.end+t.Grace-r.since()))
	defer grace.Stop()
	select {
	case <-r.resolved:
	case <-grace.C:
	case <-r.ctx.Done():
		return nil, r.ctx.Err()
	}
	r.mu.Lock()
	r.stopAt = r.since()
	r.mu.Unlock()
	stop()
	return log, nil
}

// sleepUntil waits until offset at of the run, or ctx ends.
func (r *run) sleepUntil(at time.Duration) error {
	if d := at - r.since(); d > 0 {
		return bench.Sleep(r.ctx, d)
	}
	return r.ctx.Err()
}

// stopped reports whether the run has stopped taking requests.
func (r *run) stopped() bool { return r.stop.Err() != nil }
