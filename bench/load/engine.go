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

// FixedPlan is a closed-loop plan that takes one key and holds it for
// Hold every time, then thinks for Think: the scenarios' closed loops
// (without think time, Measure's; with it, the fairness scenario's).
type FixedPlan struct {
	Key         int
	Hold, Think time.Duration
}

// Next implements Plan.
func (p FixedPlan) Next() workload.Step {
	return workload.Step{Key: p.Key, Hold: p.Hold, Think: p.Think}
}
