// Package sessions opens C concurrent lock sessions (holders and waiters)
// on any bench.Locker across K keys, keeps them, and closes them: the
// session-count machinery of the scale scenario. It also reads and raises
// the open-file limit that bounds C, and says clearly when a C cannot fit.
//
// Session i asks for key i mod K. The first session of each key holds it;
// every further session of a key waits behind it (a queue on monolock, a
// polling loop on Redis). K = C gives C idle holders, K = 1 one holder and
// C−1 waiters.
package sessions

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// Defaults of Config.
const (
	DefaultConcurrency = 256
	DefaultKeyPrefix   = "scale-"
	// queuedPoll is how often Open asks Config.Queued while waiters queue.
	queuedPoll = 5 * time.Millisecond
)

// Config configures Open.
type Config struct {
	// Locker opens the sessions. Required. Acquire must be safe for
	// concurrent use, as the seam requires.
	Locker bench.Locker
	// Sessions is C, the number of sessions. Required, > 0.
	Sessions int
	// Keys is K, the number of distinct keys, 1..Sessions. Default:
	// Sessions (every session holds a key of its own).
	Keys int
	// KeyPrefix is put before each key's number. Default DefaultKeyPrefix.
	KeyPrefix string
	// Concurrency bounds the sessions being opened at once: holders whose
	// Acquire has not returned, and (with Queued) waiters not yet queued.
	// It keeps the server's accept backlog (net.core.somaxconn) from
	// overflowing into SYN retransmits. Default DefaultConcurrency.
	Concurrency int
	// Ramp spreads the session starts evenly over this duration. A Ramp of
	// one heartbeat interval spreads the holders' heartbeats evenly in
	// time, as in a fleet that did not start at one instant. Default 0:
	// as fast as Concurrency allows.
	Ramp time.Duration
	// Queued, if set, reports how many sessions the server has queued
	// (monolock: the monolock_waiters gauge). Open then keeps at most
	// Concurrency waiters started but not queued, and returns once all
	// C−K are queued. If nil, waiters start in batches of Concurrency 5 ms
	// apart (and no faster than Ramp) and Open returns once all their
	// Acquire calls are in flight: the seam cannot tell a queued waiter
	// from a dialling one. Default nil.
	Queued func(ctx context.Context) (int, error)
	// Progress, if set, is called from Open's goroutine as sessions open:
	// about every Concurrency sessions and once at the end. Default nil.
	Progress func(Progress)
}

// Progress is a snapshot of an opening Set.
type Progress struct {
	Total   int `json:"total"`
	Started int `json:"started"`
	Held    int `json:"held"`
	// Queued is the last Config.Queued answer (0 without Queued).
	Queued  int           `json:"queued"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

func (c Config) withDefaults() (Config, error) {
	if c.Locker == nil {
		return c, errors.New("sessions: Config.Locker is nil")
	}
	if c.Sessions < 1 {
		return c, fmt.Errorf("sessions: Config.Sessions = %d, want > 0", c.Sessions)
	}
	if c.Keys == 0 {
		c.Keys = c.Sessions
	}
	if c.Keys < 1 || c.Keys > c.Sessions {
		return c, fmt.Errorf("sessions: Config.Keys = %d, want 1..Sessions (%d)", c.Keys, c.Sessions)
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	return c, nil
}

// Session is one lock session of a Set.
type Session struct {
	Index int
	Key   string

	cancel    context.CancelFunc
	done      chan struct{} // closed when Acquire returned
	held      bench.Held
	err       error
	grantedAt time.Time
	release   sync.Once
	relErr    error
}

// Done is closed when the session's Acquire returned: it holds the lock,
// or it failed (Err), or it was cancelled.
func (s *Session) Done() <-chan struct{} { return s.done }

// Held returns the held lock, or nil while waiting or after a failure.
func (s *Session) Held() bench.Held {
	select {
	case <-s.done:
		return s.held
	default:
		return nil
	}
}

// GrantedAt is when Acquire returned the lock; zero if it did not (yet).
func (s *Session) GrantedAt() time.Time {
	if s.Held() == nil {
		return time.Time{}
	}
	return s.grantedAt
}

// Err is the error Acquire returned; nil while waiting or once held.
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Release gives the session up: a waiter leaves (its Acquire is cancelled
// and awaited), a holder releases its lock. Only the first call acts.
func (s *Session) Release(ctx context.Context) error {
	s.release.Do(func() {
		s.cancel()
		select {
		case <-s.done:
		case <-ctx.Done():
			s.relErr = fmt.Errorf("sessions: session %d (%s) did not leave: %w", s.Index, s.Key, ctx.Err())
			return
		}
		if s.held != nil {
			if err := s.held.Release(ctx); err != nil {
				s.relErr = fmt.Errorf("sessions: release session %d (%s): %w", s.Index, s.Key, err)
			}
		}
	})
	return s.relErr
}

func (s *Session) acquire(ctx context.Context, l bench.Locker) {
	h, err := l.Acquire(ctx, s.Key)
	if err != nil {
		s.err = explain(err)
	} else {
		s.held, s.grantedAt = h, time.Now()
	}
	close(s.done)
}

// explain adds what to change to the errors a large C runs into.
func explain(err error) error {
	switch {
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return fmt.Errorf("%w (out of open files: see FileLimits.Check and RLIMIT_NOFILE)", err)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("%w (out of ephemeral ports: spread the connections over more addresses, see bench/load/spreaddial)", err)
	}
	return err
}

// Set is C open sessions. Its methods are safe for concurrent use.
type Set struct {
	cfg      Config
	sessions []*Session
	opened   time.Duration
}

// Open starts cfg.Sessions sessions: the K holders first, Concurrency at
// a time, then the waiters. It returns once every holder holds and every
// waiter is queued (see Config.Queued). If any session fails, or ctx ends
// first, Open closes the ones it opened and returns an error naming the
// session. ctx bounds the opening only: the sessions live until Close.
func Open(ctx context.Context, cfg Config) (*Set, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	set := &Set{cfg: cfg, sessions: make([]*Session, cfg.Sessions)}
	for i := range set.sessions {
		set.sessions[i] = &Session{Index: i, Key: cfg.KeyPrefix + strconv.Itoa(i%cfg.Keys), done: make(chan struct{})}
	}
	o := opener{set: set, start: time.Now(), failed: make(chan *Session, 1)}
	if err := o.open(ctx); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return nil, errors.Join(err, set.closeStarted(cctx, o.started))
	}
	set.opened = time.Since(o.start)
	return set, nil
}

type opener struct {
	set     *Set
	start   time.Time
	started int
	held    atomic.Int64
	queued  int
	failed  chan *Session // the first waiter whose Acquire failed
}

func (o *opener) progress() {
	if f := o.set.cfg.Progress; f != nil {
		f(Progress{Total: o.set.cfg.Sessions, Started: o.started, Held: int(o.held.Load()), Queued: o.queued, Elapsed: time.Since(o.start)})
	}
}

// due is how long until session i may start (Ramp); ≤ 0 when it may now.
func (o *opener) due(i int) time.Duration {
	r := o.set.cfg.Ramp
	if r <= 0 {
		return 0
	}
	return time.Until(o.start.Add(time.Duration(int64(r) * int64(i) / int64(o.set.cfg.Sessions))))
}

// launch starts the next session. A holder reports to finished when its
// Acquire returns; a waiter (finished nil) only when it fails.
func (o *opener) launch(ctx context.Context, finished chan<- *Session) {
	s := o.set.sessions[o.started]
	o.started++
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	go func() {
		s.acquire(actx, o.set.cfg.Locker)
		if s.err == nil {
			o.held.Add(1)
		}
		if finished != nil {
			finished <- s
		} else if s.err != nil {
			select {
			case o.failed <- s:
			default:
			}
		}
	}()
}

func (o *opener) fail(s *Session) error {
	return fmt.Errorf("sessions: session %d (%s) of %d: %w", s.Index, s.Key, o.set.cfg.Sessions, s.err)
}

// timer returns a channel that fires after d, and its stop function.
func timer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

func (o *opener) open(ctx context.Context) error {
	cfg := o.set.cfg
	// Holders: at most Concurrency Acquire calls in flight.
	finished := make(chan *Session, cfg.Keys)
	inFlight, done := 0, 0
	for done < cfg.Keys {
		var next <-chan time.Time
		stop := func() bool { return false }
		if o.started < cfg.Keys && inFlight < cfg.Concurrency {
			d := o.due(o.started)
			if d <= 0 {
				o.launch(ctx, finished)
				inFlight++
				continue
			}
			next, stop = timer(d)
		}
		var s *Session
		select {
		case <-next:
		case s = <-finished:
		case <-ctx.Done():
		}
		stop()
		switch {
		case s != nil:
			inFlight--
			done++
			if s.err != nil {
				return o.fail(s)
			}
			if done%cfg.Concurrency == 0 {
				o.progress()
			}
		case ctx.Err() != nil:
			return fmt.Errorf("sessions: opening %d holders: %w (%d held)", cfg.Keys, ctx.Err(), o.held.Load())
		}
	}
	// Waiters: their Acquire returns only when promoted, so only the
	// server (Queued) can say when one is settled; without it, batches of
	// Concurrency start queuedPoll apart.
	waiters := cfg.Sessions - cfg.Keys
	for o.started < cfg.Sessions || (cfg.Queued != nil && o.queued < waiters) {
		pending := o.started - cfg.Keys - o.queued
		if cfg.Queued == nil {
			pending = (o.started - cfg.Keys) % cfg.Concurrency
		}
		wait := queuedPoll
		if o.started < cfg.Sessions && pending < cfg.Concurrency {
			if wait = o.due(o.started); wait <= 0 {
				o.launch(ctx, nil)
				if cfg.Queued == nil && (o.started-cfg.Keys)%cfg.Concurrency == 0 {
					o.progress()
					wait = queuedPoll
				} else {
					continue
				}
			}
		}
		c, stop := timer(wait)
		select {
		case <-c:
		case s := <-o.failed:
			stop()
			return o.fail(s)
		case <-ctx.Done():
			stop()
			return fmt.Errorf("sessions: opening %d waiters: %w (%d queued of %d started)", waiters, ctx.Err(), o.queued, o.started-cfg.Keys)
		}
		if cfg.Queued == nil {
			continue
		}
		n, err := cfg.Queued(ctx)
		if err != nil {
			return fmt.Errorf("sessions: asking the server how many are queued: %w", err)
		}
		report := n/cfg.Concurrency != o.queued/cfg.Concurrency
		o.queued = n
		if report {
			o.progress()
		}
	}
	select {
	case s := <-o.failed:
		return o.fail(s)
	default:
	}
	o.progress()
	return nil
}

// Sessions returns the sessions, in index order. Do not modify the slice.
func (s *Set) Sessions() []*Session { return s.sessions }

// OpenTime is how long Open took: for waiters with Config.Queued, the
// time to queue them all.
func (s *Set) OpenTime() time.Duration { return s.opened }

// Counts returns how many sessions hold their lock now, how many are
// still waiting, and how many failed or were released.
func (s *Set) Counts() (held, waiting, ended int) {
	for _, x := range s.sessions {
		select {
		case <-x.done:
			if x.held == nil {
				ended++
				continue
			}
			select {
			case <-x.held.Lost():
				ended++
			default:
				held++
			}
		default:
			waiting++
		}
	}
	return held, waiting, ended
}

// Close ends every session: the waiters leave first (so that releasing a
// holder promotes no one), then the holders release, Concurrency at a
// time. It returns the release errors joined (the first few and a count).
func (s *Set) Close(ctx context.Context) error {
	return s.closeStarted(ctx, len(s.sessions))
}

func (s *Set) closeStarted(ctx context.Context, n int) error {
	ss := s.sessions[:n]
	var waiters, holders []*Session
	for _, x := range ss {
		if x.Held() == nil {
			waiters = append(waiters, x)
		} else {
			holders = append(holders, x)
		}
	}
	var (
		mu    sync.Mutex
		errs  []error
		count int
	)
	release := func(group []*Session) {
		sem := make(chan struct{}, s.cfg.Concurrency)
		var wg sync.WaitGroup
		for _, x := range group {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := x.Release(ctx); err != nil {
					mu.Lock()
					count++
					if len(errs) < 3 {
						errs = append(errs, err)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	release(waiters)
	release(holders)
	if count > len(errs) {
		errs = append(errs, fmt.Errorf("sessions: and %d more release errors", count-len(errs)))
	}
	return errors.Join(errs...)
}
