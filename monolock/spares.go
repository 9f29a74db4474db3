package monolock

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSpareMaxAge is Config.SpareMaxAge when it is zero: comfortably
// below the server's default io-timeout (5s), after which the server
// closes a connection that has not sent its ACQUIRE.
const DefaultSpareMaxAge = 3 * time.Second

// Back-off of the spare refill after a failed dial, so that a server that
// is down costs a few dials a second, not a busy loop.
const (
	spareBackoffMin = 100 * time.Millisecond
	spareBackoffMax = 5 * time.Second
)

// errSpareDead reports that a spare turned out to be closed before the
// server answered its ACQUIRE: the server has no claim from it, and the
// claim is made again on a fresh connection.
var errSpareDead = errors.New("monolock: spare connection closed before an answer")

// acquireOnSpare makes the claim on a spare connection when one is ready:
// ok is false when there is none, or when the spare turned out to be dead
// (closed by the server's io-timeout or a restart) before any byte of an
// answer arrived; the caller then dials, as without spares.
func (c *Client) acquireOnSpare(ctx context.Context, name string, ms uint32, lease time.Duration) (l *Lock, err error, ok bool) {
	if c.spares == nil {
		return nil, nil, false
	}
	for {
		conn := c.spares.take()
		if conn == nil {
			return nil, nil, false
		}
		l, err := c.claim(ctx, conn, name, ms, lease, true)
		if errors.Is(err, errSpareDead) {
			c.spares.dead.Add(1)
			continue // the next spare, or a dial
		}
		return l, err, true
	}
}

// countingReader counts the bytes read through it: a spare's claim may be
// made again only if no byte of an answer has arrived.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// spare is a connection dialled in advance, and when its dial began (the
// server's io-timeout runs from about then).
type spare struct {
	conn net.Conn
	born time.Time
}

// spares keeps up to max connections dialled in advance, oldest first, and
// replaces those taken (in batches: once half are gone) or reaching maxAge.
// One goroutine (run) decides what to dial; max dialers, each a goroutine
// that lives as long as the spares, make the dials, so that dials overlap
// and claims in a burst find spares. A new goroutine per dial grew its
// stack through every dial: 9% of the client's CPU when claiming back to
// back, and competing with the claims. close stops them all.
type spares struct {
	dial   func(context.Context) (net.Conn, error)
	max    int
	maxAge time.Duration

	ctx    context.Context // cancelled by close: aborts dials in flight
	cancel context.CancelFunc
	wake   chan struct{}  // spares were taken or a dial failed (capacity 1)
	order  chan struct{}  // one per dial for the dialers to make (capacity max)
	done   chan struct{}  // closed when run has returned
	dials  sync.WaitGroup // the dialers
	dead   atomic.Int64   // spares found closed by the server (for tests)
	missed atomic.Int64   // takes that found no spare (for benchmarks)

	mu       sync.Mutex
	idle     []spare // oldest first
	dialing  int     // dials in flight
	failures int     // dials failed since run last looked
	closed   bool
}

func newSpares(dial func(context.Context) (net.Conn, error), max int, maxAge time.Duration) *spares {
	ctx, cancel := context.WithCancel(context.Background())
	p := &spares{dial: dial, max: max, maxAge: maxAge, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), order: make(chan struct{}, max), done: make(chan struct{})}
	for range max {
		p.dials.Go(p.dialer)
	}
	go p.run()
	return p
}

// dialer makes the dials run orders, one at a time, until close.
func (p *spares) dialer() {
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.order:
			p.dialOne()
		}
	}
}

// take returns the oldest spare that is young enough, or nil. The caller
// asks for a replacement (taken) once its claim has been answered, so that
// the replacement's handshake does not compete with the claim for CPU on
// either side; a spare too old or missing is replaced at once.
//
// Whether the spare is still open is not asked here: a system call on the
// claim's critical path (getsockopt TCP_INFO was a p50 of 10µs of a warm
// claim's ~120µs) to spare a rare case. A spare the server closed (a
// restart, or an io-timeout shorter than SpareMaxAge) is found out by its
// ACQUIRE, which gets no byte of an answer, and the claim moves on to the
// next spare or a dial (errSpareDead).
func (p *spares) take() net.Conn {
	var drop []net.Conn
	defer func() {
		for _, c := range drop {
			closeAbortively(c)
		}
		if len(drop) > 0 {
			p.refill()
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for len(p.idle) > 0 {
		s := p.idle[0]
		p.idle[0] = spare{}
		p.idle = p.idle[1:]
		if now.Sub(s.born) >= p.maxAge {
			drop = append(drop, s.conn)
			continue
		}
		return s.conn
	}
	p.missed.Add(1)
	p.refill()
	return nil
}

// taken asks for replacements once half of the spares (rounded up) are
// taken and not yet being replaced: dialled in a batch, the refill wakes
// run once per max/2 claims rather than once per claim, and its dials
// overlap.
func (p *spares) taken() {
	p.mu.Lock()
	low := len(p.idle)+p.dialing <= p.max/2
	p.mu.Unlock()
	if low {
		p.refill()
	}
}

// refill wakes run to replace the spares taken.
func (p *spares) refill() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run refills the spares until close: it drops those that reach maxAge,
// starts dials for what is missing, and backs off after failures.
func (p *spares) run() {
	defer close(p.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	backoff := time.Duration(0) // the current back-off; 0 after a success
	var retryAt time.Time       // no dial before this, after a failure
	for {
		now := time.Now()
		p.mu.Lock()
		var expired []net.Conn
		for len(p.idle) > 0 && now.Sub(p.idle[0].born) >= p.maxAge {
			expired = append(expired, p.idle[0].conn)
			p.idle[0] = spare{}
			p.idle = p.idle[1:]
		}
		if p.failures > 0 {
			p.failures = 0
			backoff = min(max(2*backoff, spareBackoffMin), spareBackoffMax)
			retryAt = now.Add(backoff)
		} else if p.dialing == 0 && len(p.idle) > 0 {
			backoff = 0 // every dial since the last failure connected
		}
		missing := p.max - len(p.idle) - p.dialing
		start := missing > 0 && !now.Before(retryAt)
		if start {
			p.dialing += missing
		}
		var next time.Time // the oldest spare's expiry
		if len(p.idle) > 0 {
			next = p.idle[0].born.Add(p.maxAge)
		} else if p.dialing > 0 {
			next = now.Add(p.maxAge) // a spare dialled from now on expires no sooner
		}
		p.mu.Unlock()
		for _, c := range expired {
			closeAbortively(c)
		}
		if start {
			for range missing { // never blocks: dialing + idle <= max
				p.order <- struct{}{}
			}
		}
		// Sleep until the oldest spare expires, the back-off ends, or a
		// take or a failure wakes us.
		if missing > 0 && !start && (next.IsZero() || retryAt.Before(next)) {
			next = retryAt
		}
		if next.IsZero() {
			next = now.Add(time.Hour) // nothing to expire or dial: cannot happen with max > 0
		}
		timer.Reset(time.Until(next))
		select {
		case <-p.ctx.Done():
			return
		case <-p.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// dialOne dials one spare and adds it, keeping the list ordered by age
// (dials finish out of order); a failure wakes run to back off.
func (p *spares) dialOne() {
	born := time.Now()
	c, err := p.dial(p.ctx)
	p.mu.Lock()
	p.dialing--
	late := err == nil && (p.closed || len(p.idle) >= p.max)
	switch {
	case err != nil:
		p.failures++
	case !late:
		i := len(p.idle)
		for i > 0 && p.idle[i-1].born.After(born) {
			i--
		}
		p.idle = append(p.idle, spare{})
		copy(p.idle[i+1:], p.idle[i:])
		p.idle[i] = spare{conn: c, born: born}
	}
	p.mu.Unlock()
	if late {
		closeAbortively(c)
	}
	if err != nil {
		p.refill()
	}
}

// close stops the refill and closes every spare; it returns when run and
// its dials have finished.
func (p *spares) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	<-p.done
	p.dials.Wait()
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, s := range idle {
		closeAbortively(s.conn)
	}
}
