package monolock

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// peerConn is the server side of one connection in a scripted peer.
type peerConn struct {
	t    *testing.T
	conn net.Conn
	acq  protocol.Acquire
}

func (p *peerConn) write(b []byte) {
	if _, err := p.conn.Write(b); err != nil {
		p.t.Errorf("peer write: %v", err)
	}
}

// answerHeartbeats answers every HEARTBEAT with frame until the client
// closes the connection, and returns how many it read. The client may
// close while an answer is on its way: in memory, where a write waits for
// the reader, that write then fails, and ends the conversation too.
func (p *peerConn) answerHeartbeats(frame []byte) int {
	n := 0
	for {
		typ, err := protocol.ReadType(p.conn)
		if err != nil {
			return n
		}
		if typ != protocol.TypeHeartbeat {
			p.t.Errorf("peer read frame type 0x%02x, want HEARTBEAT", typ)
			return n
		}
		n++
		if frame == nil {
			continue
		}
		if _, err := p.conn.Write(frame); err != nil {
			return n
		}
	}
}

// scriptedPeer plays the server for a client: for each connection the
// client makes it reads and checks the ACQUIRE, then runs script. The
// connections are in memory (net.Pipe), so in a testing/synctest bubble
// the client's heartbeats and deadlines run on the fake clock and a test
// asserts them exactly. It returns a client for it.
func scriptedPeer(t *testing.T, script func(p *peerConn)) *Client {
	t.Helper()
	ln := monolocktest.NewListener()
	servePeer(t, ln, script)
	return New(Config{Address: ln.Addr().String(), Dialer: ln})
}

// scriptedTCPPeer is scriptedPeer on a loopback TCP port, for scripts that
// need a socket (a reset); it cannot run in a bubble.
func scriptedTCPPeer(t *testing.T, script func(p *peerConn)) *Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	servePeer(t, ln, script)
	return New(Config{Address: ln.Addr().String()})
}

// servePeer runs script on every connection ln accepts, until the test's
// cleanup closes ln and waits for the scripts.
func servePeer(t *testing.T, ln net.Listener, script func(p *peerConn)) {
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				typ, err := protocol.ReadType(conn)
				if err != nil || typ != protocol.TypeAcquire {
					t.Errorf("peer: first frame type 0x%02x, %v; want ACQUIRE", typ, err)
					return
				}
				acq, err := protocol.ReadAcquire(conn)
				if err != nil {
					t.Errorf("peer: ReadAcquire: %v", err)
					return
				}
				script(&peerConn{t: t, conn: conn, acq: acq})
			})
		}
	})
}

func TestAcquireHandshake(t *testing.T) {
	granted := protocol.AppendAcquired(nil, 42)
	tests := []struct {
		name   string
		script func(p *peerConn)
		want   uint64
	}{
		{"granted at once", func(p *peerConn) {
			p.write(granted)
			p.answerHeartbeats(granted)
		}, 42},
		{"granted one byte at a time", func(p *peerConn) {
			for _, b := range granted {
				p.write([]byte{b})
				time.Sleep(time.Millisecond)
			}
			p.answerHeartbeats(granted)
		}, 42},
		{"queued, then promoted by a push", func(p *peerConn) {
			p.write(protocol.AppendWaiting(nil))
			time.Sleep(50 * time.Millisecond)
			p.write(protocol.AppendAcquired(nil, 7))
			p.answerHeartbeats(protocol.AppendAcquired(nil, 7))
		}, 7},
		{"waiting and grant in one segment", func(p *peerConn) {
			p.write(protocol.AppendAcquired(protocol.AppendWaiting(nil), 9))
			p.answerHeartbeats(protocol.AppendAcquired(nil, 9))
		}, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got := make(chan protocol.Acquire, 1)
				c := scriptedPeer(t, func(p *peerConn) {
					got <- p.acq
					tt.script(p)
				})
				l, err := c.Acquire(t.Context(), "jobs/nightly ✓", 1500*time.Millisecond)
				if err != nil {
					t.Fatalf("Acquire: %v", err)
				}
				if l.Token() != tt.want {
					t.Errorf("Token = %d, want %d", l.Token(), tt.want)
				}
				if a := <-got; a.Name != "jobs/nightly ✓" || a.LeaseMS != 1500 || a.Version != protocol.Version {
					t.Errorf("server read %+v", a)
				}
				select {
				case <-l.Done():
					t.Fatalf("Done closed while held: %v", l.Err())
				default:
				}
				if err := l.Release(); err != nil {
					t.Fatalf("Release = %v", err)
				}
				select {
				case <-l.Done():
				default:
					t.Fatal("Done still open after Release")
				}
				if l.Err() != nil || l.Release() != nil {
					t.Fatalf("after Release: Err = %v, second Release = %v", l.Err(), l.Release())
				}
			})
		})
	}
}

func TestAcquireFailures(t *testing.T) {
	tests := []struct {
		name      string
		lease     time.Duration
		script    func(p *peerConn)
		want      error
		temporary bool // for a *ServerError
	}{
		{"error frame: not authorized", time.Second, func(p *peerConn) {
			p.write(protocol.AppendError(nil, protocol.CodeNotAuthorized, `identity "x" may not lock "y"`))
		}, protocol.ErrNotAuthorized, false},
		{"error frame: shutting down", time.Second, func(p *peerConn) {
			p.write(protocol.AppendError(nil, protocol.CodeShuttingDown, ""))
		}, protocol.ErrShuttingDown, true},
		{"error frame after waiting", time.Second, func(p *peerConn) {
			p.write(protocol.AppendWaiting(nil))
			p.write(protocol.AppendError(nil, protocol.CodeClosedByAdmin, "kicked"))
		}, protocol.ErrClosedByAdmin, true},
		{"unknown frame type", time.Second, func(p *peerConn) {
			p.write([]byte{0x7f})
			io.Copy(io.Discard, p.conn)
		}, ErrProtocolViolation, false},
		// A connection error is returned unchanged (the docs: "without a
		// change"), not wrapped in ErrConnectionClosed.
		{"closed without answer", time.Second, func(p *peerConn) {}, io.EOF, false},
		{"closed mid-frame", time.Second, func(p *peerConn) {
			p.write([]byte{byte(protocol.TypeAcquired), 0, 0})
		}, io.ErrUnexpectedEOF, false},
		{"queued, then closed", time.Second, func(p *peerConn) {
			p.write(protocol.AppendWaiting(nil))
		}, io.EOF, false},
		{"silent peer", 500 * time.Millisecond, func(p *peerConn) {
			io.Copy(io.Discard, p.conn)
		}, ErrHeartbeatTimeout, false},
		{"queued, then silent", 500 * time.Millisecond, func(p *peerConn) {
			p.write(protocol.AppendWaiting(nil))
			io.Copy(io.Discard, p.conn)
		}, ErrHeartbeatTimeout, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := scriptedPeer(t, tt.script)
				start := time.Now()
				l, err := c.Acquire(t.Context(), "a", tt.lease)
				if err == nil {
					l.Release()
					t.Fatal("Acquire succeeded")
				}
				if !errors.Is(err, tt.want) {
					t.Fatalf("Acquire = %v, want %v", err, tt.want)
				}
				if (tt.want == io.EOF || tt.want == io.ErrUnexpectedEOF) && err != tt.want {
					t.Fatalf("Acquire = %#v, want %v itself, unchanged", err, tt.want)
				}
				var se *ServerError
				if errors.As(err, &se) && se.Temporary() != tt.temporary {
					t.Errorf("Temporary() = %v, want %v", se.Temporary(), tt.temporary)
				}
				if errors.Is(err, ErrHeartbeatTimeout) {
					// 0.8 × lease after the ACQUIRE.
					if d := time.Since(start); d != 400*time.Millisecond {
						t.Errorf("gave up after %v, want exactly 400ms", d)
					}
				}
			})
		})
	}
}

func TestLockLoss(t *testing.T) {
	acq := func(token uint64) []byte { return protocol.AppendAcquired(nil, token) }
	tests := []struct {
		name   string
		tcp    bool // the script needs a socket: real time, no bubble
		script func(p *peerConn)
		want   error
		lostAt time.Duration // when Done closes, after the ACQUIRE (bubble only)
	}{
		{"waiting after acquired", false, func(p *peerConn) {
			p.write(acq(5))
			p.write(protocol.AppendWaiting(nil))
			io.Copy(io.Discard, p.conn)
		}, ErrProtocolViolation, 0},
		{"token changed", false, func(p *peerConn) {
			p.write(acq(5))
			p.write(acq(6))
			io.Copy(io.Discard, p.conn)
		}, ErrProtocolViolation, 0},
		{"force-released", false, func(p *peerConn) {
			p.write(acq(5))
			time.Sleep(20 * time.Millisecond)
			p.write(protocol.AppendError(nil, protocol.CodeClosedByAdmin, "force-release"))
		}, protocol.ErrClosedByAdmin, 20 * time.Millisecond},
		{"connection reset", true, func(p *peerConn) {
			p.write(acq(5))
			p.conn.(*net.TCPConn).SetLinger(0)
		}, ErrConnectionClosed, 0},
		// The first heartbeat (at lease/4) is never answered, so none
		// follows it; the lock is lost 0.8 × lease after the ACQUIRE, the
		// last frame that was answered.
		{"heartbeats unanswered", false, func(p *peerConn) {
			p.write(acq(5))
			p.answerHeartbeats(nil)
		}, ErrHeartbeatTimeout, 400 * time.Millisecond},
	}
	check := func(t *testing.T, c *Client, tcp bool, want error, lostAt time.Duration) {
		start := time.Now()
		l, err := c.Acquire(t.Context(), "a", 500*time.Millisecond)
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		select {
		case <-l.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("Done not closed")
		}
		if d := time.Since(start); !tcp && d != lostAt {
			t.Errorf("lost after %v, want exactly %v", d, lostAt)
		}
		if !errors.Is(l.Err(), want) {
			t.Fatalf("Err = %v, want %v", l.Err(), want)
		}
		if err := l.Release(); !errors.Is(err, want) {
			t.Fatalf("Release = %v, want the loss %v", err, want)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.tcp {
				check(t, scriptedTCPPeer(t, tt.script), true, tt.want, 0)
				return
			}
			synctest.Test(t, func(t *testing.T) {
				check(t, scriptedPeer(t, tt.script), false, tt.want, tt.lostAt)
			})
		})
	}
}

// Heartbeats keep a session alive well past its lease: with a lease of
// 400ms one goes out every 100ms (lease/4, no round trip in memory).
func TestHeartbeatsKeepLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		beats := make(chan int, 1)
		c := scriptedPeer(t, func(p *peerConn) {
			p.write(protocol.AppendAcquired(nil, 1))
			beats <- p.answerHeartbeats(protocol.AppendAcquired(nil, 1))
		})
		l, err := c.Acquire(t.Context(), "a", 400*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-l.Done():
			t.Fatalf("lost: %v", l.Err())
		case <-time.After(1250 * time.Millisecond): // three leases and more
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		if n := <-beats; n != 12 {
			t.Fatalf("peer saw %d heartbeats in 1250ms, want 12 (one every 100ms)", n)
		}
	})
}

func TestAcquireCancel(t *testing.T) {
	tests := []struct {
		name  string
		first []byte // nil: the peer never answers the ACQUIRE
	}{
		{"while queued", protocol.AppendWaiting(nil)},
		{"before the answer", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				closed := make(chan struct{})
				c := scriptedPeer(t, func(p *peerConn) {
					if tt.first != nil {
						p.write(tt.first)
					}
					p.answerHeartbeats(tt.first)
					close(closed)
				})
				ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
				defer cancel()
				start := time.Now()
				_, err := c.Acquire(ctx, "a", 10*time.Second)
				if err != context.DeadlineExceeded {
					t.Fatalf("Acquire = %v, want context.DeadlineExceeded unchanged", err)
				}
				if d := time.Since(start); d != 200*time.Millisecond {
					t.Fatalf("returned after %v, want at the deadline, 200ms", d)
				}
				synctest.Wait()
				select {
				case <-closed: // leaving the queue is closing the connection
				default:
					t.Fatal("connection not closed with the cancellation")
				}
			})
		})
	}
}

// neverDial fails the test if Acquire dials: validation comes first.
type neverDial struct{ t *testing.T }

func (d neverDial) DialContext(context.Context, string, string) (net.Conn, error) {
	d.t.Error("dialled despite invalid arguments")
	return nil, errors.New("unreachable")
}

func TestValidationBeforeDial(t *testing.T) {
	tests := []struct {
		name  string
		lock  string
		lease time.Duration
		want  error
	}{
		{"empty name", "", time.Second, protocol.ErrEmptyName},
		{"name of 256 bytes", strings.Repeat("n", 256), time.Second, protocol.ErrNameTooLong},
		{"invalid utf-8", "a\xffb", time.Second, protocol.ErrInvalidName},
		{"zero lease", "a", 0, protocol.ErrInvalidLease},
		{"negative lease", "a", -time.Second, protocol.ErrInvalidLease},
		{"lease under 1ms", "a", 500 * time.Microsecond, protocol.ErrInvalidLease},
	}
	fn := func(context.Context, uint64) error {
		t.Error("fn called")
		return nil
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{Address: "127.0.0.1:1", Dialer: neverDial{t}})
			calls := map[string]func() error{
				"Acquire": func() error { _, err := c.Acquire(t.Context(), tt.lock, tt.lease); return err },
				"Do":      func() error { return c.Do(t.Context(), tt.lock, tt.lease, fn) },
				"DoRetry": func() error { return c.DoRetry(t.Context(), tt.lock, tt.lease, fn) },
			}
			for call, f := range calls {
				if err := f(); !errors.Is(err, tt.want) {
					t.Errorf("%s = %v, want %v", call, err, tt.want)
				}
			}
		})
	}
	// An empty Address is reported by every call, before any dial and
	// before the name and lease are looked at.
	c := New(Config{Dialer: neverDial{t}})
	for call, err := range map[string]error{
		"Acquire": func() error { _, err := c.Acquire(t.Context(), "", 0); return err }(),
		"Do":      c.Do(t.Context(), "", 0, fn),
		"DoRetry": c.DoRetry(t.Context(), "", 0, fn),
	} {
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "Address is empty") {
			t.Errorf("%s with an empty Address = %v, want ErrInvalidConfig naming the Address", call, err)
		}
	}
	// A name of exactly 255 bytes is valid.
	if err := protocol.ValidateName(strings.Repeat("n", 255)); err != nil {
		t.Errorf("255-byte name: %v", err)
	}
}

func TestServerErrorClassification(t *testing.T) {
	for code := 0; code <= 0xff; code++ {
		e := &ServerError{Code: protocol.Code(code), Reason: "detail"}
		if got, want := e.Temporary(), code < 0x10; got != want {
			t.Errorf("code 0x%02x: Temporary = %v, want %v", code, got, want)
		}
		var pe *protocol.Error
		if !errors.As(e, &pe) || pe.Code != protocol.Code(code) {
			t.Errorf("code 0x%02x: errors.As *protocol.Error = %v", code, pe)
		}
		if canon := protocol.CanonicalError(protocol.Code(code)); canon != nil && !errors.Is(e, canon) {
			t.Errorf("code 0x%02x: not errors.Is its canonical error", code)
		}
		if got, want := retryable(e), code < 0x10; got != want {
			t.Errorf("code 0x%02x: retryable = %v, want %v", code, got, want)
		}
	}
	for _, tt := range []struct {
		err  *ServerError
		text string
	}{
		{&ServerError{0x05, ""}, "monolock: server error 0x05: unknown server condition 0x05"},
		{&ServerError{0x42, ""}, "monolock: server error 0x42: unknown client error 0x42"},
		{&ServerError{0x13, "unknown message type: 0x7f"}, "monolock: server error 0x13: unknown message type: 0x7f"},
	} {
		if got := tt.err.Error(); got != tt.text {
			t.Errorf("Error() = %q, want %q", got, tt.text)
		}
	}
}

// A waiter that could not act past its patience (frozen, as by SIGSTOP; here
// its keeper is stuck writing a heartbeat the peer does not read, so the
// keeper's deadline never gets its turn) must not report the promotion it
// then reads: the server may already have expired the session and granted
// the lock to someone else. The frame arrives 0.8 × lease after the last
// confirmation, so the session is lost before the frame is processed.
func TestFrameAfterPatienceIsLoss(t *testing.T) {
	const lease = 500 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		c := scriptedPeer(t, func(p *peerConn) {
			p.write(protocol.AppendWaiting(nil))
			time.Sleep(lease) // the client's heartbeat write waits meanwhile
			p.conn.Write(protocol.AppendAcquired(nil, 7))
			io.Copy(io.Discard, p.conn)
		})
		start := time.Now()
		l, err := c.Acquire(t.Context(), "a", lease)
		if err == nil {
			l.Release()
			t.Fatalf("Acquire granted token %d %v after the ACQUIRE, past the patience of %v", l.Token(), time.Since(start), patience(lease))
		}
		if !errors.Is(err, ErrHeartbeatTimeout) {
			t.Fatalf("Acquire = %v, want ErrHeartbeatTimeout", err)
		}
		if d := time.Since(start); d < patience(lease) {
			t.Errorf("lost after %v, before the patience of %v", d, patience(lease))
		}
	})
}

// noDeadlineDialer dials ln with connections whose read deadlines never
// fire: what a process stopped past the deadline sees when it resumes with
// the answer already buffered and its read returning before the timer.
type noDeadlineDialer struct{ ln *monolocktest.Listener }

func (d noDeadlineDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.ln.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return noDeadlineConn{c}, nil
}

type noDeadlineConn struct{ net.Conn }

func (noDeadlineConn) SetReadDeadline(time.Time) error { return nil }

// The ACQUIRE's own answer read later than the patience is a loss too (the
// handshake reads it itself, before any reader goroutine exists).
func TestHandshakeAnswerAfterPatienceIsLoss(t *testing.T) {
	const lease = 500 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		ln := monolocktest.NewListener()
		servePeer(t, ln, func(p *peerConn) {
			time.Sleep(lease)
			p.conn.Write(protocol.AppendAcquired(nil, 7))
			io.Copy(io.Discard, p.conn)
		})
		c := New(Config{Address: ln.Addr().String(), Dialer: noDeadlineDialer{ln}})
		l, err := c.Acquire(t.Context(), "a", lease)
		if err == nil {
			l.Release()
			t.Fatalf("Acquire granted token %d, answered after %v, past the patience of %v", l.Token(), lease, patience(lease))
		}
		if !errors.Is(err, ErrHeartbeatTimeout) {
			t.Fatalf("Acquire = %v, want ErrHeartbeatTimeout", err)
		}
	})
}
