package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/workload"
)

// Schedule is an open loop's source of requests in due order, the same
// for every contender (*workload.Schedule). The engine draws from it
// under one lock.
type Schedule interface{ Next() workload.Request }

// Plan is one closed-loop client's source of steps (*workload.ClientPlan,
// or a fixed key and hold). One client goroutine owns it.
type Plan interface{ Next() workload.Step }

// Traffic is one run of the load generator: Clients goroutines, each one
// request at a time, driven either by a Schedule (open loop: a free
// client takes the next request and waits until it is due) or by a Plan
// per client (closed loop: acquire → hold → release → think). Set exactly
// one of Schedule and Plan.
//
// The run is continuous: its first Warmup is not measured, and the
// measured requests are those whose intended start falls in the window
// [Warmup, Warmup+Window) (or, with Steps, each client's first Steps
// requests after Warmup). Once the window has closed and every measured
// request has its grant or failure, or Grace after the window at the
// latest, the run stops: no request is taken any more, holds still
// running are cut (released), waits are cancelled and recorded as
// censored, and measured requests no client took are recorded as never
// started.
type Traffic struct {
	// Clients is the number of clients; FirstClient numbers the first
	// (a process of a multi-process run runs a range of them). Events
	// carry the client's number.
	Clients, FirstClient int
	// Locker returns the Locker of a client: one shared by all, or each
	// client's own.
	Locker func(client int) bench.Locker
	// Key names the lock of a request from its client and key index.
	Key func(client, key int) string

	// Schedule drives an open loop.
	Schedule Schedule
	// Take, when set, keeps only the scheduled requests it returns true
	// for (a process's share of a schedule that several processes draw
	// from alike). Default: all.
	Take func(workload.Request) bool
	// Plan drives a closed loop: the steps of each client.
	Plan func(client int) Plan

	// Warmup is the unmeasured start of the run.
	Warmup time.Duration
	// WarmEachClient (closed loop only, plans without think time)
	// extends the warm-up until every client has finished a request, so
	// that no client's first dial is measured; the window then opens at
	// once. For short closed loops on a fresh Locker (the scenarios'
	// Measure), whose first requests set up the connections.
	WarmEachClient bool
	// Window is the measured window of intended starts after Warmup.
	Window time.Duration
	// Steps, when positive (closed loop only), measures each client's
	// first Steps requests after Warmup instead of a Window; each client
	// stops after them, and the window closes when the last one has.
	Steps int
	// Grace is how long after the window the run may go on, at the same
	// load, for the measured requests still waiting to get their grant.
	// Zero stops at the window's end.
	Grace time.Duration
	// Edge, when set, is called at the window's start and at its end
	// (after Steps: once the last client stopped), while the clients go
	// on: the reads of CPU and counters that bracket the window. An error
	// stops the run and is returned.
	Edge func(ctx context.Context, e Edge) error
	// Epoch is the zero of every stamp of the run, on the monotonic
	// clock; default: when Run starts. Processes of one run share it.
	Epoch time.Time
}

// Edge names one edge of the measured window.
type Edge int

// The edges of the window.
const (
	WindowStart Edge = iota
	WindowEnd
)

// failurePause keeps a closed-loop client whose acquire failed from
// spinning against a dead server.
const failurePause = 10 * time.Millisecond

// Outcome is how a request ended.
type Outcome uint8

// The outcomes of a request.
const (
	// Granted: the lock was acquired (and then released).
	Granted Outcome = iota + 1
	// Failed: Acquire returned an error of the lock while the run went on
	// (a give-up, a refused connection).
	Failed
	// Censored: the request was still waiting when the run stopped; its
	// wait lasted at least until then.
	Censored
	// Unstarted: an open loop's request no client had taken when the run
	// stopped; its latency is at least the stop minus its due time.
	Unstarted
)

func (o Outcome) String() string {
	switch o {
	case Granted:
		return "granted"
	case Failed:
		return "failed"
	case Censored:
		return "censored"
	case Unstarted:
		return "unstarted"
	}
	return "unknown"
}

// never marks a stamp an event did not reach.
const never = time.Duration(-1)

// Event is one request's record. Stamps are offsets from the run's
// epoch on the monotonic clock; a stamp the request did not reach is -1.
type Event struct {
	Client int `json:"c"`
	// Key is the key index; Index the request's number (the schedule's,
	// or the client's step number in a closed loop).
	Key   int   `json:"k"`
	Index int64 `json:"i"`
	// Hold is the planned hold.
	Hold time.Duration `json:"h"`
	// Intended is when the request was meant to start: its due time (open
	// loop), or its client's release plus think time (closed loop). Call
	// is when Acquire was called, Grant when it returned the lock,
	// Release when Release returned. Ended is when an acquire that got
	// no lock returned (failure, cancellation), or the stop for a request
	// never started.
	Intended time.Duration `json:"t"`
	Call     time.Duration `json:"a"`
	Grant    time.Duration `json:"g"`
	Release  time.Duration `json:"r"`
	Ended    time.Duration `json:"e"`
	Outcome  Outcome       `json:"o"`
	// Measured: the request belongs to the window.
	Measured bool `json:"m,omitempty"`
	// Cut: the run's stop ended the hold early. Lost: the lock's Lost
	// channel closed before Release. ReleaseFailed: Release returned an
	// error. GaveUp: a failure wrapping bench.ErrGaveUp.
	Cut           bool `json:"x,omitempty"`
	Lost          bool `json:"l,omitempty"`
	ReleaseFailed bool `json:"rf,omitempty"`
	GaveUp        bool `json:"gu,omitempty"`
}

// Log is what a run recorded: every request's event and the window.
type Log struct {
	// Events are every request the run took, and the measured ones it
	// did not, ordered by intended start.
	Events []Event
	// Start and End bound the window of intended starts: [Start, End).
	Start, End time.Duration
	// Edges are when the edge reads began (WindowStart) and ended
	// (WindowEnd): the span their CPU and counters cover.
	Edges [2]time.Duration
	// Stop is when the run stopped taking requests.
	Stop time.Duration
	// Errors keeps the first few distinct error messages.
	Errors []string
}

// Run runs t until its window closed and its measured requests are
// resolved (see Traffic), and returns the log. On cancellation of ctx it
// stops the clients, releases what they hold and returns ctx.Err().
func Run(ctx context.Context, t Traffic) (*Log, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	epoch := t.Epoch
	if epoch.IsZero() {
		epoch = time.Now()
	}
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	r := &run{
		t: t, epoch: epoch, ctx: ctx, stop: stopCtx,
		start:    t.Warmup,
		end:      t.Warmup + t.Window,
		resolved: make(chan struct{}),
		done:     make(chan struct{}),
		warm:     make(chan struct{}),
		left:     t.Clients,
		cold:     t.Clients,
		logs:     make([][]Event, t.Clients),
	}
	if t.WarmEachClient {
		r.start, r.end = math.MaxInt64, math.MaxInt64
	}
	if t.Steps > 0 {
		r.end = math.MaxInt64
	}
	if t.Schedule != nil {
		r.peek = r.draw()
	}
	var wg sync.WaitGroup
	for i := range t.Clients {
		wg.Go(func() { r.logs[i] = r.client(t.FirstClient + i) })
	}
	log, err := r.coordinate(stop)
	stop()
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	log.Stop = r.stopAt
	for _, l := range r.logs {
		log.Events = append(log.Events, l...)
	}
	log.Events = append(log.Events, r.untaken(log.Stop)...)
	slices.SortStableFunc(log.Events, func(a, b Event) int { return cmpDuration(a.Intended, b.Intended) })
	log.Errors = r.errors
	return log, nil
}

func (t Traffic) check() error {
	switch {
	case t.Clients <= 0:
		return fmt.Errorf("load: %d clients", t.Clients)
	case t.Locker == nil || t.Key == nil:
		return errors.New("load: a Traffic needs Locker and Key")
	case (t.Schedule == nil) == (t.Plan == nil):
		return errors.New("load: a Traffic needs exactly one of Schedule and Plan")
	case (t.Steps > 0 || t.WarmEachClient) && t.Schedule != nil:
		return errors.New("load: Steps and WarmEachClient are for a closed loop")
	case t.Steps <= 0 && t.Window <= 0:
		return fmt.Errorf("load: window %v: want a positive Window or Steps", t.Window)
	case t.Warmup < 0 || t.Grace < 0:
		return fmt.Errorf("load: warm-up %v and grace %v must not be negative", t.Warmup, t.Grace)
	}
	return nil
}

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
	msg := err.Error()
	if len(r.errors) < maxErrors && !slices.Contains(r.errors, msg) {
		r.errors = append(r.errors, msg)
	}
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
		return Sleep(r.ctx, d)
	}
	return r.ctx.Err()
}

// stopped reports whether the run has stopped taking requests.
func (r *run) stopped() bool { return r.stop.Err() != nil }

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
			_ = Sleep(r.stop, d)
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
			_ = Sleep(r.stop, d)
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

// FixedPlan is a closed-loop plan that takes one key and holds it for
// Hold every time, with no think time: the scenarios' closed loop.
type FixedPlan struct {
	Key  int
	Hold time.Duration
}

// Next implements Plan.
func (p FixedPlan) Next() workload.Step { return workload.Step{Key: p.Key, Hold: p.Hold} }
