package nemesis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
)

// Server is a lock server the nemesis can kill and restart, pause and
// thaw; bench.Server is one.
type Server interface {
	Name() string
	// Kill crashes the server (SIGKILL); Restart starts it again on the
	// same address and returns once it serves.
	Kill(ctx context.Context) error
	Restart(ctx context.Context) error
	// Pause freezes it; Unpause thaws it.
	Pause(ctx context.Context) error
	Unpause(ctx context.Context) error
}

// ClockServer is a server whose wall clock the nemesis can step;
// bench.ClockShiftedServer is one.
type ClockServer interface {
	Name() string
	// ShiftClock makes the server's wall clock run d ahead of the host's;
	// 0 puts it back.
	ShiftClock(ctx context.Context, d time.Duration) error
}

// Client is a client process the nemesis can fault (ProcessClient is
// one). A method the client cannot do returns an error wrapping
// bench.ErrNotSupported: the fault is then skipped and recorded so.
type Client interface {
	Name() string
	// Pause freezes the process (SIGSTOP); Resume lets it go on.
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
	// LoseHost makes its connections to the lock servers go silent both
	// ways; RestoreHost makes them pass again.
	LoseHost(ctx context.Context) error
	RestoreHost(ctx context.Context) error
	// Partition drops one direction of its traffic to the lock servers;
	// Heal makes both pass again.
	Partition(ctx context.Context, d Direction) error
	Heal(ctx context.Context) error
}

// PauseWatcher is a Client that can see its pause take effect: the
// executor then records when (check.Event.AckT), and the checkers take
// the process as frozen from then, not from the start line.
// ProcessClient is one.
type PauseWatcher interface {
	// AwaitStopped returns when the process was first seen stopped;
	// AwaitRunning when it was first seen running again. Both return
	// ctx's error once it ends first.
	AwaitStopped(ctx context.Context) (check.Mono, error)
	AwaitRunning(ctx context.Context) (check.Mono, error)
}

// Targets are what a contender's faults act on.
type Targets struct {
	// Clients[i] is the schedule's client i+1.
	Clients []Client
	// Servers are the contender's lock servers; a server fault takes the
	// ((Fault.Server−1) mod len)-th.
	Servers []Server
	// Clocks are the servers whose wall clock can be stepped (chosen the
	// same way); without any, clock steps are skipped.
	Clocks []ClockServer
	// Cannot names kinds the caller knows the contender or backend cannot
	// do, with the reason; their faults are skipped with it.
	Cannot map[Kind]string
	// Holder, when set, names the client (1…len(Clients)) that holds the
	// lock now, ok false when none does. A client fault then strikes the
	// holder at the fault's start instead of the scheduled client, if no
	// other fault acts on the holder then (else the scheduled client, as
	// without Holder): a fault on a waiter tests little of a lock. The
	// schedule stays the same for every contender; the outcome and the
	// history name the client struck.
	Holder func() (client int, ok bool)
}

// DefaultHealTimeout bounds the healing of one fault (a restart included)
// when Executor.HealTimeout is zero.
const DefaultHealTimeout = time.Minute

// Executor applies a schedule to one contender's targets and records
// every fault into Recorder (process check.NemesisProcess):
//
//   - start, with the time taken just before the fault was applied;
//   - end, with the time healing completed (and the error if healing
//     failed);
//   - for a pause of a PauseWatcher client, the start also with when the
//     process was seen stopped (AckT), and the end with when SIGCONT was
//     sent and AckT when it was seen running: the line's own time is not
//     when the process froze or ran again;
//   - skip, when the contender or backend cannot do the fault's kind;
//   - fault-failed, when applying it failed.
//
// Faults on one client, and server faults, run one at a time even when
// a slow heal (a restart) overruns the schedule: the later fault then
// starts late and keeps its duration; Outcome has the real times.
type Executor struct {
	Targets  Targets
	Recorder *check.Recorder
	// Observe, when set, is called with each fault event once it is
	// recorded, before the executor goes on with that fault (a start's
	// fault is in effect during the call, an end's is healed). Faults run
	// on goroutines of their own, so calls may be concurrent.
	Observe func(check.Event)
	// HealTimeout bounds the healing of one fault; zero means
	// DefaultHealTimeout. Healing goes on when the run's ctx ends.
	HealTimeout time.Duration
}

// Outcome is what became of one scheduled fault.
type Outcome struct {
	Fault Fault `json:"fault"`
	// Target names the client or server it acted on; Aimed says a client
	// fault struck the holder (Targets.Holder) rather than the scheduled
	// client.
	Target string `json:"target,omitempty"`
	Aimed  bool   `json:"aimed,omitempty"`
	// Applied says the fault happened, from Start to End (CLOCK_MONOTONIC).
	Applied bool       `json:"applied"`
	Start   check.Mono `json:"start,omitempty"`
	End     check.Mono `json:"end,omitempty"`
	// Skipped says why the fault was not done (the contender or backend
	// cannot, or the run ended before its start).
	Skipped string `json:"skipped,omitempty"`
	// Err is why applying or healing it failed.
	Err string `json:"error,omitempty"`
}

// NotReached is the Skipped reason of faults whose start the run did not
// reach (ctx ended first).
const NotReached = "the run ended before its start"

// action is how one fault is applied and healed.
type action struct {
	target      string
	lane        string // faults of one lane run one at a time
	apply, heal func(context.Context) error
	// applied and healed, when set, wait until the fault is seen to have
	// taken effect and to be gone (a pause: the process stopped, running
	// again) and return when; the end is then recorded at the heal's
	// sending, not after it.
	applied, healed func(context.Context) (check.Mono, error)
	skip            string
}

// AckTimeout bounds the wait for a client pause's SIGSTOP or SIGCONT to
// be seen taking effect; past it the event has no ack_t. A process stops
// within microseconds unless it is in an uninterruptible sleep.
const AckTimeout = time.Second

// Run applies s from now on and returns once every fault that started has
// ended, with one Outcome per fault in schedule order. When ctx ends,
// faults in effect are healed at once and later ones are not started; Run
// then returns ctx.Err(). Other errors (a fault could not be applied or
// healed, the recorder failed) are joined into the returned error after
// the whole schedule ran; the outcomes say which fault each belongs to.
func (e *Executor) Run(ctx context.Context, s Schedule) ([]Outcome, error) {
	if e.Recorder == nil {
		return nil, errors.New("nemesis: no recorder")
	}
	for _, f := range s.Faults {
		if clientKind(f.Kind) && (f.Client < 1 || f.Client > len(e.Targets.Clients)) {
			return nil, fmt.Errorf("nemesis: fault %d names client %d, the run has %d", f.ID, f.Client, len(e.Targets.Clients))
		}
	}
	begin := time.Now()
	out := make([]Outcome, len(s.Faults))
	lanes := map[string]chan struct{}{}
	addLane := func(f Fault) {
		if a := e.action(f); lanes[a.lane] == nil {
			lanes[a.lane] = make(chan struct{}, 1)
		}
	}
	for _, f := range s.Faults {
		addLane(f)
		if clientKind(f.Kind) && e.Targets.Holder != nil {
			for c := range e.Targets.Clients { // any client may be the holder
				g := f
				g.Client = c + 1
				addLane(g)
			}
		}
	}
	var wg sync.WaitGroup
	for i, f := range s.Faults {
		wg.Go(func() { out[i] = e.run(ctx, begin, f, lanes) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return out, err
	}
	var errs []error
	for _, o := range out {
		if o.Err != "" {
			errs = append(errs, fmt.Errorf("nemesis: fault %d (%s on %s): %s", o.Fault.ID, o.Fault.Kind, o.Target, o.Err))
		}
	}
	if err := e.Recorder.Err(); err != nil {
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// run waits for f's start and its lane, applies f, waits its duration (or
// ctx's end) and heals it.
func (e *Executor) run(ctx context.Context, begin time.Time, f Fault, lanes map[string]chan struct{}) Outcome {
	a := e.action(f)
	o := Outcome{Fault: f, Target: a.target}
	timer := time.NewTimer(time.Until(begin.Add(f.Start)))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		o.Skipped = NotReached
		return o
	}
	lane := lanes[a.lane]
	if aimed, ok := e.aim(f, lanes); ok {
		// The holder's lane is taken: the fault strikes it.
		a = e.action(aimed)
		lane = lanes[a.lane]
		o.Target, o.Aimed = a.target, true
	} else {
		desc := &check.Fault{Kind: string(f.Kind), Target: a.target, Direction: string(f.Direction), StepNS: int64(f.Step)}
		if a.skip != "" {
			o.Skipped = a.skip
			e.record(check.Event{Type: check.Skip, ID: int64(f.ID), Fault: desc, Error: a.skip})
			return o
		}
		select {
		case lane <- struct{}{}:
		case <-ctx.Done():
			o.Skipped = NotReached
			return o
		}
	}
	defer func() { <-lane }()
	desc := &check.Fault{Kind: string(f.Kind), Target: a.target, Direction: string(f.Direction), StepNS: int64(f.Step)}

	start := check.Now()
	if err := a.apply(ctx); err != nil {
		if errors.Is(err, bench.ErrNotSupported) {
			o.Skipped = err.Error()
			e.record(check.Event{Type: check.Skip, ID: int64(f.ID), Fault: desc, Error: o.Skipped})
			return o
		}
		o.Err = "applying: " + err.Error()
		e.record(check.Event{T: start, Type: check.FaultFailed, ID: int64(f.ID), Fault: desc, Error: err.Error()})
		return o
	}
	o.Applied, o.Start = true, start
	e.record(check.Event{T: start, Type: check.Start, ID: int64(f.ID), Fault: desc, AckT: ack(ctx, a.applied)})

	hold := time.NewTimer(f.Duration)
	defer hold.Stop()
	select {
	case <-hold.C:
	case <-ctx.Done():
	}
	timeout := e.HealTimeout
	if timeout <= 0 {
		timeout = DefaultHealTimeout
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	end := check.Event{Type: check.End, ID: int64(f.ID), Fault: desc}
	if a.healed != nil {
		end.T = check.Now() // the signal's sending; ack_t says when it took
	}
	if err := a.heal(hctx); err != nil {
		o.Err = "healing: " + err.Error()
		end.Error = o.Err
	} else {
		end.AckT = ack(hctx, a.healed)
	}
	end = e.record(end)
	o.End = end.T
	return o
}

// aim returns f aimed at the holder, with the holder's lane taken, when f
// is a client fault, Targets.Holder names a holder other than f's client,
// and no other fault acts on it now.
func (e *Executor) aim(f Fault, lanes map[string]chan struct{}) (Fault, bool) {
	if !clientKind(f.Kind) || e.Targets.Holder == nil {
		return f, false
	}
	if _, cannot := e.Targets.Cannot[f.Kind]; cannot {
		return f, false
	}
	c, ok := e.Targets.Holder()
	if !ok || c < 1 || c > len(e.Targets.Clients) || c == f.Client {
		return f, false
	}
	g := f
	g.Client = c
	select {
	case lanes[e.action(g).lane] <- struct{}{}:
		return g, true
	default:
		return f, false
	}
}

// ack waits up to AckTimeout for seen and returns when it saw it; nil
// without seen or when it did not see it in time.
func ack(ctx context.Context, seen func(context.Context) (check.Mono, error)) *check.Mono {
	if seen == nil {
		return nil
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AckTimeout)
	defer cancel()
	t, err := seen(actx)
	if err != nil {
		return nil
	}
	return &t
}

// record writes ev as the nemesis's and shows it to Observe.
func (e *Executor) record(ev check.Event) check.Event {
	ev.Process, ev.F = check.NemesisProcess, check.FuncFault
	ev, _ = e.Recorder.Record(ev) // an error sticks in the recorder; Run reports it
	if ev.T == 0 {
		ev.T = check.Now()
	}
	if e.Observe != nil {
		e.Observe(ev)
	}
	return ev
}

// action resolves f against the targets.
func (e *Executor) action(f Fault) action {
	t := e.Targets
	if why, ok := t.Cannot[f.Kind]; ok {
		return action{skip: why, lane: "skip"}
	}
	switch f.Kind {
	case ClientPause, ClientHostLoss, ClientPartition:
		c := t.Clients[f.Client-1]
		a := action{target: c.Name(), lane: "client " + c.Name()}
		switch f.Kind {
		case ClientPause:
			a.apply, a.heal = c.Pause, c.Resume
			if w, ok := c.(PauseWatcher); ok {
				a.applied, a.healed = w.AwaitStopped, w.AwaitRunning
			}
		case ClientHostLoss:
			a.apply, a.heal = c.LoseHost, c.RestoreHost
		default:
			a.apply = func(ctx context.Context) error { return c.Partition(ctx, f.Direction) }
			a.heal = c.Heal
		}
		return a
	case ServerKill, ServerPause:
		if len(t.Servers) == 0 {
			return action{skip: "no server to fault", lane: "skip"}
		}
		s := t.Servers[(f.Server-1)%len(t.Servers)]
		a := action{target: s.Name(), lane: "servers"}
		if f.Kind == ServerKill {
			a.apply, a.heal = s.Kill, s.Restart
		} else {
			a.apply, a.heal = s.Pause, s.Unpause
		}
		return a
	case ClockStep:
		if len(t.Clocks) == 0 {
			return action{skip: "no server whose wall clock can be stepped", lane: "skip"}
		}
		s := t.Clocks[(f.Server-1)%len(t.Clocks)]
		return action{
			target: s.Name(), lane: "servers",
			apply: func(ctx context.Context) error { return s.ShiftClock(ctx, f.Step) },
			heal:  func(ctx context.Context) error { return s.ShiftClock(ctx, 0) },
		}
	}
	return action{skip: fmt.Sprintf("unknown kind %q", f.Kind), lane: "skip"}
}
