package redissonlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// permits is how many unlock messages an entry keeps for threads that are
// not waiting yet (Redisson's semaphore keeps every one; beyond a few,
// more change nothing: each wakes one thread to try once).
const permits = 64

// reconnectPause spaces the receive loop's reads while the subscription
// connection cannot be had (the server is down); go-redis reconnects and
// resubscribes on the next read.
const reconnectPause = 100 * time.Millisecond

// pubSub is a client's subscriptions over one connection, as Redisson's
// LockPubSub: one entry per channel, shared by the threads that wait on
// it; the first subscribes, the last unsubscribes. Its methods are safe
// for concurrent use.
//
// Nothing is sent while mu is held: the SUBSCRIBEs and UNSUBSCRIBEs are
// queued in the order mu decided them and sent by the writer goroutine.
// A send may have to redial (seconds while the server restarts); the
// receive loop's confirmations and wake-ups, and threads that join or
// leave, never wait for it.
type pubSub struct {
	ps *redis.PubSub

	mu      sync.Mutex // guards the fields below
	entries map[string]*entry
	// stale counts, per channel, the confirmations still due to
	// SUBSCRIBEs of entries already removed: they confirm no later entry.
	stale   map[string]int
	writes  []write // to send, in order
	started bool    // the receive loop and the writer run
	closed  bool

	kick      chan struct{} // holds a token while writes wait
	ctx       context.Context
	cancel    context.CancelFunc // at close: ends the loops and a dial in progress
	receiving chan struct{}      // closed when the receive loop returned
	writing   chan struct{}      // closed when the writer returned
}

// write is one SUBSCRIBE (for entry e) or UNSUBSCRIBE (e nil) to send.
type write struct {
	channel string
	e       *entry
}

// entry is one subscribed channel.
type entry struct {
	refs int
	// wake holds the unlock messages not yet taken by a waiting thread.
	wake chan struct{}
	// ready is closed once the SUBSCRIBE is confirmed (or its
	// confirmation was lost with the connection, or it could not be
	// sent: then err says why).
	ready     chan struct{}
	confirmed bool
	err       error
}

func newPubSub(rc *redis.Client) *pubSub {
	ctx, cancel := context.WithCancel(context.Background())
	return &pubSub{
		// No channel yet: go-redis connects at the first SUBSCRIBE.
		ps:        rc.Subscribe(ctx),
		entries:   map[string]*entry{},
		stale:     map[string]int{},
		kick:      make(chan struct{}, 1),
		ctx:       ctx,
		cancel:    cancel,
		receiving: make(chan struct{}),
		writing:   make(chan struct{}),
	}
}

// subscription is one thread's hold on an entry.
type subscription struct {
	p       *pubSub
	channel string
	e       *entry
}

// subscribe takes a hold on channel's entry for one thread, queueing a
// SUBSCRIBE if the channel has none. The subscription is in force once
// await returned nil.
func (p *pubSub) subscribe(channel string) (*subscription, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("redissonlock: client closed")
	}
	if e := p.entries[channel]; e != nil {
		e.refs++
		return &subscription{p: p, channel: channel, e: e}, nil
	}
	e := &entry{refs: 1, wake: make(chan struct{}, permits), ready: make(chan struct{})}
	p.entries[channel] = e
	p.send(write{channel: channel, e: e})
	if !p.started {
		p.started = true
		go p.receive()
		go p.write()
	}
	return &subscription{p: p, channel: channel, e: e}, nil
}

// send queues w for the writer; mu is held.
func (p *pubSub) send(w write) {
	p.writes = append(p.writes, w)
	select {
	case p.kick <- struct{}{}:
	default: // the writer has a token already
	}
}

// close ends the thread's hold; the last one unsubscribes the channel.
func (s *subscription) close() {
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.e.refs--; s.e.refs > 0 {
		return
	}
	delete(p.entries, s.channel)
	if !s.e.confirmed {
		p.stale[s.channel]++
	}
	if !p.closed {
		p.send(write{channel: s.channel})
	}
}

// ping sends PING on the subscription connection (Redisson pings its
// subscription connections every 30 s by default). A thread sends one when
// it starts to wait, so that INFO commandstats counts the waiters; a
// failed one only goes uncounted.
func (p *pubSub) ping(ctx context.Context) {
	_ = p.ps.Ping(ctx)
}

// await waits until the subscription is in force, at most bound: a
// confirmation that does not come leaves the thread to its timed retries.
// It returns the error of a SUBSCRIBE that could not be sent.
func (s *subscription) await(ctx context.Context, bound time.Duration) error {
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-s.e.ready:
		return s.e.err
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// wait returns after an unlock message or ttl, whichever comes first; a
// negative ttl waits for a message only, a zero ttl takes a message if one
// is there and returns at once (Redisson's latch.tryAcquire(ttl)).
func (s *subscription) wait(ctx context.Context, ttl time.Duration) error {
	if ttl == 0 {
		select {
		case <-s.e.wake:
		default:
		}
		return ctx.Err()
	}
	var timeout <-chan time.Time
	if ttl > 0 {
		t := time.NewTimer(ttl)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-s.e.wake:
	case <-timeout:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// write sends the queued SUBSCRIBEs and UNSUBSCRIBEs in order until close.
func (p *pubSub) write() {
	defer close(p.writing)
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.kick:
		}
		p.mu.Lock()
		ws := p.writes
		p.writes = nil
		p.mu.Unlock()
		for _, w := range ws {
			if w.e == nil {
				// A failed UNSUBSCRIBE leaves a channel nobody listens
				// to until the connection is replaced (go-redis forgets
				// it at once): harmless.
				_ = p.ps.Unsubscribe(p.ctx, w.channel)
				continue
			}
			if err := p.ps.Subscribe(p.ctx, w.channel); err != nil {
				p.failed(w, err)
			}
		}
	}
}

// failed releases the threads of an entry whose SUBSCRIBE could not be
// sent, with the error (Redisson fails the lock() of every thread waiting
// on that subscription). go-redis keeps the channel for its next
// connection until the entry's last thread unsubscribes it.
func (p *pubSub) failed(w write, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := w.e
	if e.confirmed {
		return // released when the connection was lost
	}
	e.confirmed = true
	e.err = fmt.Errorf("redissonlock: SUBSCRIBE %s: %w", w.channel, err)
	close(e.ready)
	if p.entries[w.channel] != e && p.stale[w.channel] > 0 {
		// Removed before: the confirmation counted as still due will
		// not come.
		p.stale[w.channel]--
	}
}

// receive reads the subscription connection until close: confirmations
// release the threads that await them, unlock messages wake one thread.
func (p *pubSub) receive() {
	defer close(p.receiving)
	for {
		msg, err := p.ps.Receive(p.ctx)
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			p.lost()
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(reconnectPause):
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				p.confirm(m.Channel)
			}
		case *redis.Message:
			p.wakeOne(m.Channel)
		}
	}
}

func (p *pubSub) confirm(channel string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.stale[channel]; n > 0 {
		if n == 1 {
			delete(p.stale, channel)
		} else {
			p.stale[channel] = n - 1
		}
		return
	}
	if e := p.entries[channel]; e != nil && !e.confirmed {
		e.confirmed = true
		close(e.ready)
	} // else a resubscription after a reconnect
}

func (p *pubSub) wakeOne(channel string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.entries[channel]; e != nil {
		select {
		case e.wake <- struct{}{}:
		default: // permits enough are waiting already
		}
	}
}

// lost is called when the connection failed: the confirmations still due
// are lost with it, and go-redis resubscribes every channel on the next
// connection, so the threads awaiting one go on now.
func (p *pubSub) lost() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.entries {
		if !e.confirmed {
			e.confirmed = true
			close(e.ready)
		}
	}
	clear(p.stale)
}

// close closes the connection and waits for the loops to end.
func (p *pubSub) close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	started := p.started
	p.mu.Unlock()
	p.cancel()
	err := p.ps.Close()
	if started {
		<-p.receiving
		<-p.writing
	}
	if errors.Is(err, redis.ErrClosed) {
		err = nil
	}
	return err
}
