package monolock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// Lock is one granted claim: a connection whose session owns the lock. A
// reader goroutine and its Client's keeper (one for all of the Client's
// Locks) keep it alive until Release or loss; the reader does not outlive
// the Lock, and the keeper lets go of it in Release. Methods are safe for
// concurrent use.
type Lock struct {
	name    string
	conn    net.Conn
	token   uint64        // written by the reader before granted is closed
	granted chan struct{} // closed on the first ACQUIRED

	ctx    context.Context // Done: cancelled when the session ends
	cancel context.CancelFunc

	mu    sync.Mutex
	ended bool
	err   error // why the session ended; nil for Release

	r  *bufio.Reader  // all reads of conn
	wg sync.WaitGroup // the reader

	conf confirmation // the last confirmation, for the reader's check

	keeper *keeper // the Client's: heartbeats and the pessimistic deadline
	beat   beat    // this session's state in the keeper
}

// confirmation is the pessimist's rule on the reader's side: a frame that
// arrives more than patience after the send of the last answered frame
// finds the session already lost (the server may have expired it), however
// late the keeper's own deadline fires.
type confirmation struct {
	born     time.Time     // the monotonic origin of sent
	patience time.Duration // 0.8 × lease; set before the reader starts
	sent     atomic.Int64  // send time of the last answered frame, ns after born
}

func newLock(name string, conn net.Conn, k *keeper) *Lock {
	ctx, cancel := context.WithCancel(context.Background())
	return &Lock{name: name, conn: conn, r: bufio.NewReaderSize(conn, 64), granted: make(chan struct{}), ctx: ctx, cancel: cancel, conf: confirmation{born: time.Now()}, keeper: k}
}

// confirm records that the frame sent at sentAt has been answered.
func (c *confirmation) confirm(sentAt time.Time) { c.sent.Store(int64(sentAt.Sub(c.born))) }

// overdue reports whether a frame received at is too late: more than
// patience after the send of the last answered frame.
func (c *confirmation) overdue(at time.Time) bool {
	return at.Sub(c.born)-time.Duration(c.sent.Load()) > c.patience
}

// Name returns the lock's name.
func (l *Lock) Name() string { return l.name }

// Token returns the fencing token of the grant: strictly greater than the
// token of every earlier grant of any lock on the server (and, unless the
// server's clock steps back across a restart, on its earlier runs). Pass it
// to the resource you protect.
func (l *Lock) Token() uint64 { return l.token }

// Done returns a channel that is closed the moment ownership stops being
// confirmed: on loss (Err is then non-nil) and on Release (Err stays nil).
func (l *Lock) Done() <-chan struct{} { return l.ctx.Done() }

// Err returns why ownership was lost: nil while the lock is held and after
// a Release that came first; otherwise ErrHeartbeatTimeout,
// ErrConnectionClosed or ErrProtocolViolation (wrapped with detail), or a
// *ServerError (for example code 0x02 after a force-release by an
// administrator).
func (l *Lock) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Release closes the connection, which is the release: the server promotes
// the next waiter at once. It waits for the Lock's goroutines to exit and
// returns Err: nil if the lock was still held, the cause if ownership had
// already been lost (so the critical section may not have been exclusive).
// Calling it again returns the same.
func (l *Lock) Release() error {
	l.end(nil)
	l.wait()
	return l.Err()
}

// handshake reads the answer to the ACQUIRE sent at sentAt, giving up
// after 0.8 × lease (ErrHeartbeatTimeout) or when ctx ends (ctx.Err()).
// The read deadline it sets stays until the reader lifts it.
func (l *Lock) handshake(ctx context.Context, lease time.Duration, sentAt time.Time) (protocol.ServerFrame, time.Time, error) {
	l.conn.SetReadDeadline(sentAt.Add(patience(lease)))
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { l.conn.SetReadDeadline(time.Unix(1, 0)) })
	}
	f, err := protocol.ReadServerFrame(l.r)
	at := time.Now()
	if stop != nil && !stop() {
		return f, at, ctx.Err()
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return f, at, ErrHeartbeatTimeout
		}
		return f, at, l.readError(err)
	}
	if at.Sub(sentAt) > patience(lease) { // read after a freeze, before the deadline fired
		return f, at, ErrHeartbeatTimeout
	}
	return f, at, nil
}

// start launches the reader once the ACQUIRE sent at sentAt has been
// answered at answeredAt; waiting tells whether that answer was WAITING.
// The reader lifts the handshake's read deadline and hands the session to
// the keeper itself, on its own goroutine: the caller, Acquire, returns
// without that work (a p50 of ~5µs of a warm claim after its answer).
func (l *Lock) start(lease time.Duration, sentAt, answeredAt time.Time, waiting bool) {
	l.conf.patience = patience(lease)
	l.conf.confirm(sentAt)
	l.beat = beat{w: l.conn, conf: &l.conf, lost: func(err error) { l.stop(err) }, slot: -1}
	l.wg.Add(1)
	go l.read(lease, waiting, sentAt, answeredAt)
}

// end ends the session once (cause nil is a Release) and takes it out of
// the keeper.
func (l *Lock) end(cause error) {
	l.stop(cause)
	l.keeper.remove(&l.beat)
}

// stop ends the session once, reporting whether this call did: Done is
// closed before the connection so that watchers learn of a loss first.
// The keeper calls it (under its mutex) for a session it gives up, which
// it has taken out itself.
func (l *Lock) stop(cause error) bool {
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return false
	}
	l.ended, l.err = true, cause
	l.mu.Unlock()
	l.cancel()
	closeAbortively(l.conn)
	return true
}

// wait returns when the reader has exited and the keeper has let go of
// the session, which must have ended. The reader hands the session to the
// keeper before it reads, so once it has exited the keeper has it.
func (l *Lock) wait() {
	l.wg.Wait()
	l.keeper.remove(&l.beat)
}

// read is the permanent reader from the answer to ACQUIRE on: it decodes
// every server frame until the connection ends, and tells the keeper when
// a frame answers one we sent. waited tells whether the session is queued.
//
// After a WAITING, the first ACQUIRED is the promotion the server pushes on
// its own, not an answer; every other WAITING or ACQUIRED answers a frame.
func (l *Lock) read(lease time.Duration, waited bool, sentAt, answeredAt time.Time) {
	defer l.wg.Done()
	l.conn.SetReadDeadline(time.Time{}) // the handshake's
	l.keeper.add(&l.beat, lease, sentAt, answeredAt)
	granted := !waited
	for {
		f, err := protocol.ReadServerFrame(l.r)
		at := time.Now()
		if err != nil {
			if l.ctx.Err() == nil { // not our own Release
				l.end(l.readError(err))
			}
			return
		}
		if l.conf.overdue(at) {
			l.end(ErrHeartbeatTimeout)
			return
		}
		switch f.Type {
		case protocol.TypeWaiting:
			if granted {
				l.end(fmt.Errorf("%w: WAITING after ACQUIRED", ErrProtocolViolation))
				return
			}
			l.keeper.answered(&l.beat, at)
		case protocol.TypeAcquired:
			if granted {
				if f.Token != l.token {
					l.end(fmt.Errorf("%w: token changed from %d to %d", ErrProtocolViolation, l.token, f.Token))
					return
				}
				l.keeper.answered(&l.beat, at)
				continue
			}
			l.token, granted = f.Token, true
			close(l.granted)
		case protocol.TypeError:
			l.end(&ServerError{Code: f.Code, Reason: f.Reason})
			return
		}
	}
}

// readError classifies a failed read of a server frame.
func (l *Lock) readError(err error) error {
	if errors.Is(err, protocol.ErrUnknownFrame) {
		return fmt.Errorf("%w: %w", ErrProtocolViolation, err)
	}
	return &connError{err: err}
}
