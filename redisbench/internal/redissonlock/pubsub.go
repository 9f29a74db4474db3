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
type pubSub struct {
	ps *redis.PubSub

	mu      sync.Mutex // guards the fields below and orders writes with their replies
	entries map[string]*entry
	// stale counts, per channel, the confirmations still due to
	// SUBSCRIBEs of entries already removed: they confirm no later entry.
	stale   map[string]int
	started bool // the receive loop runs
	closed  bool

	done  chan struct{} // closed by close
	ended chan struct{} // closed when the receive loop returned
}

// entry is one subscribed channel.
type entry struct {
	refs int
	// wake holds the unlock messages not yet taken by a waiting thread.
	wake chan struct{}
	// ready is closed once the SUBSCRIBE is confirmed (or its
	// confirmation was lost with the connection).
	ready     chan struct{}
	confirmed bool
}

func newPubSub(rc *redis.Client) *pubSub {
	return &pubSub{
		// No channel yet: go-redis connects at the first SUBSCRIBE.
		ps:      rc.Subscribe(context.Background()),
		entries: map[string]*entry{},
		stale:   map[string]int{},
		done:    make(chan struct{}),
		ended:   make(chan struct{}),
	}
}

// subscription is one thread's hold on an entry.
type subscription struct {
	p       *pubSub
	channel string
	e       *entry
}

// subscribe takes a hold on channel's entry for one thread, sending
// SUBSCRIBE if the channel has none. The subscription is in force once
// the entry is ready.
func (p *pubSub) subscribe(ctx context.Context, channel string) (*subscription, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("redissonlock: client closed")
	}
	if e := p.entries[channel]; e != nil {
		e.refs++
		return &subscription{p: p, channel: channel, e: e}, nil
	}
	if err := p.ps.Subscribe(ctx, channel); err != nil {
		// go-redis keeps the channel for its next connection: forget it.
		_ = p.ps.Unsubscribe(context.Background(), channel)
		return nil, fmt.Errorf("redissonlock: SUBSCRIBE %s: %w", channel, err)
	}
	e := &entry{refs: 1, wake: make(chan struct{}, permits), ready: make(chan struct{})}
	p.entries[channel] = e
	if !p.started {
		p.started = true
		go p.receive()
	}
	return &subscription{p: p, channel: channel, e: e}, nil
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
	// A failed UNSUBSCRIBE leaves a channel nobody listens to until the
	// connection is replaced (go-redis forgets it at once): harmless.
	_ = p.ps.Unsubscribe(context.Background(), s.channel)
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
func (s *subscription) await(ctx context.Context, bound time.Duration) error {
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-s.e.ready:
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

// receive reads the subscription connection until close: confirmations
// release the threads that await them, unlock messages wake one thread.
func (p *pubSub) receive() {
	defer close(p.ended)
	for {
		msg, err := p.ps.Receive(context.Background())
		if err != nil {
			select {
			case <-p.done:
				return
			default:
			}
			p.lost()
			select {
			case <-p.done:
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

// close closes the connection and waits for the receive loop to end.
func (p *pubSub) close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	started := p.started
	p.mu.Unlock()
	close(p.done)
	err := p.ps.Close()
	if started {
		<-p.ended
	}
	if errors.Is(err, redis.ErrClosed) {
		err = nil
	}
	return err
}
