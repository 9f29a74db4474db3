package monolock

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/testpki"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// scriptDialer dials in-memory connections (net.Pipe, so that synctest can
// see every wait) to a scripted server: serve(i, conn) plays the server of
// the i-th dial, then the server side reads until the client closes.
type scriptDialer struct {
	serve func(i int, conn net.Conn) // nil: only wait for the close
	fail  bool                       // every dial fails
	block bool                       // every dial waits for its context

	mu     sync.Mutex
	dials  []time.Time // when each dial happened
	closes []time.Time // when each connection was closed by the client
}

func (d *scriptDialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	d.mu.Lock()
	i := len(d.dials)
	d.dials = append(d.dials, time.Now())
	d.mu.Unlock()
	if d.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if d.fail {
		return nil, errors.New("refused")
	}
	cl, sv := net.Pipe()
	go func() {
		if d.serve != nil {
			d.serve(i, sv)
		}
		io.Copy(io.Discard, sv)
		sv.Close()
		d.mu.Lock()
		d.closes = append(d.closes, time.Now())
		d.mu.Unlock()
	}()
	return cl, nil
}

func (d *scriptDialer) counts() (dials, closes int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.dials), len(d.closes)
}

// readAcquire reads one ACQUIRE as the server does; false when the client
// closed the connection unused (a spare at Close) or sent something else.
func readAcquire(conn net.Conn) bool {
	r := bufio.NewReader(conn)
	if typ, err := protocol.ReadType(r); err != nil || typ != protocol.TypeAcquire {
		return false
	}
	_, err := protocol.ReadAcquire(r)
	return err == nil
}

// TestSparesRefresh: the spares are dialled at New, each is closed and
// replaced when it reaches SpareMaxAge (not before), and Close closes the
// rest and leaves no goroutine (synctest fails on one left blocked).
func TestSparesRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &scriptDialer{}
		c := New(Config{Address: "pipe", Dialer: d, Spares: 2, SpareMaxAge: 3 * time.Second})
		check := func(when string, wantDials, wantCloses int) {
			t.Helper()
			synctest.Wait()
			if dials, closes := d.counts(); dials != wantDials || closes != wantCloses {
				t.Errorf("%s: %d dials, %d closes; want %d, %d", when, dials, closes, wantDials, wantCloses)
			}
		}
		check("at New", 2, 0)
		time.Sleep(3*time.Second - time.Millisecond)
		check("just before the max age", 2, 0)
		time.Sleep(time.Millisecond)
		check("at the max age", 4, 2)
		time.Sleep(3 * time.Second)
		check("one more age", 6, 4)
		c.Close()
		check("after Close", 6, 6)
		c.Close() // harmless
	})
}

// TestSpareDialersLast: the spares' dials, a refill at every SpareMaxAge,
// are made on as many goroutines as there are spares, the same ones each
// time: a goroutine started per dial grew its stack through the dial
// every time.
func TestSpareDialersLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &scriptDialer{}
		var mu sync.Mutex
		goroutines := map[string]bool{} // the dialling goroutines' headers
		c := New(Config{Address: "pipe", Spares: 2, SpareMaxAge: time.Second, Dialer: dialerFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
			buf := make([]byte, 64)
			header, _, _ := strings.Cut(string(buf[:runtime.Stack(buf, false)]), " [")
			mu.Lock()
			goroutines[header] = true
			mu.Unlock()
			return d.DialContext(ctx, network, addr)
		})})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		c.Close()
		dials, _ := d.counts()
		if dials != 12 {
			t.Fatalf("%d dials in 5s, want 12 (2 at New, 2 at each max age)", dials)
		}
		if len(goroutines) > 2 {
			t.Errorf("%d dials made on %d goroutines, want at most 2 (Spares)", dials, len(goroutines))
		}
	})
}

// dialerFunc is a Dialer made of a function.
type dialerFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (f dialerFunc) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}

// TestSpareDefaultMaxAge: without SpareMaxAge spares live 3s, below the
// server's default io-timeout of 5s.
func TestSpareDefaultMaxAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &scriptDialer{}
		c := New(Config{Address: "pipe", Dialer: d, Spares: 1})
		defer c.Close()
		time.Sleep(DefaultSpareMaxAge - time.Nanosecond)
		synctest.Wait()
		if dials, _ := d.counts(); dials != 1 {
			t.Errorf("%d dials before 3s", dials)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if dials, _ := d.counts(); dials != 2 {
			t.Errorf("%d dials at 3s, want 2", dials)
		}
	})
}

// TestAcquireTakesSpare: Acquire writes its ACQUIRE on a spare (no dial of
// its own) and the spare is replaced in the background.
func TestAcquireTakesSpare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &scriptDialer{serve: func(i int, conn net.Conn) {
			if !readAcquire(conn) {
				return
			}
			conn.Write(protocol.AppendAcquired(nil, uint64(100+i)))
		}}
		c := New(Config{Address: "pipe", Dialer: d, Spares: 1})
		defer c.Close()
		synctest.Wait()
		l, err := c.Acquire(t.Context(), "a", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if l.Token() != 100 {
			t.Errorf("token %d, want 100 (the spare's)", l.Token())
		}
		synctest.Wait()
		if dials, _ := d.counts(); dials != 2 {
			t.Errorf("%d dials, want 2 (the spare and its replacement)", dials)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDeadSpareRetried: a spare closed without any answer to its ACQUIRE
// (the server dropped it) is discarded and the claim is made again, unseen
// by the caller; an answer that has begun is never replayed: an ERROR is
// the caller's, and so is a connection lost inside a frame.
func TestDeadSpareRetried(t *testing.T) {
	for _, tt := range []struct {
		name    string
		first   func(conn net.Conn) // the server of the first spare
		wantErr error               // nil: granted by a later connection
	}{
		{"closed after ACQUIRE", func(conn net.Conn) { conn.Close() }, nil},
		{"ERROR answered", func(conn net.Conn) { conn.Write(protocol.AppendError(nil, protocol.CodeShuttingDown, "")) }, protocol.ErrShuttingDown},
		{"half an ACQUIRED", func(conn net.Conn) { conn.Write(protocol.AppendAcquired(nil, 1)[:3]); conn.Close() }, io.ErrUnexpectedEOF},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &scriptDialer{serve: func(i int, conn net.Conn) {
					if !readAcquire(conn) {
						return
					}
					if i == 0 {
						tt.first(conn)
						return
					}
					conn.Write(protocol.AppendAcquired(nil, uint64(100+i)))
				}}
				c := New(Config{Address: "pipe", Dialer: d, Spares: 1})
				defer c.Close()
				synctest.Wait()
				l, err := c.Acquire(t.Context(), "a", 10*time.Second)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("err = %v, want %v", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("err = %v, want a grant on a fresh connection", err)
				}
				if l.Token() <= 100 {
					t.Errorf("token %d: not from a later connection", l.Token())
				}
				if n := c.spares.dead.Load(); n != 1 {
					t.Errorf("%d dead spares seen, want 1", n)
				}
				l.Release()
			})
		})
	}
}

// TestSpareDialBackoff: while the server refuses, the refill backs off
// (100ms doubling to 5s) instead of dialling in a loop, and Acquire dials
// on its own.
func TestSpareDialBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &scriptDialer{fail: true}
		c := New(Config{Address: "pipe", Dialer: d, Spares: 1})
		time.Sleep(10 * time.Second)
		synctest.Wait()
		// 0, .1, .3, .7, 1.5, 3.1, 6.3 s: 7 dials.
		if dials, _ := d.counts(); dials != 7 {
			t.Errorf("%d dials in 10s, want 7", dials)
		}
		if _, err := c.Acquire(t.Context(), "a", time.Second); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("Acquire: %v, want the dial error", err)
		}
		c.Close()
	})
}

// TestCloseStopsDialInFlight: Close cancels a spare's dial that hangs and
// returns with no goroutine left behind.
func TestCloseStopsDialInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &scriptDialer{block: true}
		c := New(Config{Address: "pipe", Dialer: d, Spares: 3})
		synctest.Wait()
		if dials, _ := d.counts(); dials != 3 {
			t.Errorf("%d dials in flight, want 3", dials)
		}
		c.Close()
	})
}

// TestCloseWithoutSpares: a Client without spares needs no Close; Close
// is a no-op.
func TestCloseWithoutSpares(t *testing.T) {
	c := New(Config{Address: "127.0.0.1:1"})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// hiddenConn hides the socket of a connection, so that the liveness check
// before ACQUIRE cannot see it and a dead spare is found by its ACQUIRE.
type hiddenConn struct{ net.Conn }

type hidingDialer struct{ net.Dialer }

func (d *hidingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.Dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return hiddenConn{c}, nil
}

// waitFor polls cond until it holds, for at most 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dialers: the liveness check sees the socket (a dead spare is dropped
// before its ACQUIRE) or does not (the ACQUIRE meets the closed
// connection and the claim is made again): over TCP, or in a synctest
// bubble on in-memory connections, which have no socket to look at (and
// where the ACQUIRE's write fails).
var spareDialers = []struct {
	name string
	d    func() Dialer // over TCP; nil: in memory, in a bubble
}{
	{"checked before ACQUIRE", func() Dialer { return &net.Dialer{} }},
	{"found by ACQUIRE", func() Dialer { return &hidingDialer{} }},
	{"found by ACQUIRE in memory", nil},
}

// spareTest runs f against a server with cfg: over TCP with the dialer d
// makes, or (d nil) in a synctest bubble on in-memory connections.
func spareTest(t *testing.T, d func() Dialer, cfg server.Config, f func(t *testing.T, srv *monolocktest.Server, d Dialer)) {
	if d != nil {
		f(t, monolocktest.NewServerConfig(t, cfg), d())
		return
	}
	synctest.Test(t, func(t *testing.T) {
		srv := monolocktest.NewPipeServer(t, cfg)
		f(t, srv, srv)
	})
}

// idleSpares is the number of spares ready in c's pool.
func idleSpares(c *Client) int {
	c.spares.mu.Lock()
	defer c.spares.mu.Unlock()
	return len(c.spares.idle)
}

// TestSpareClosedByIOTimeout: the server closes a spare that sends no
// ACQUIRE within its io-timeout; the next claim does not notice. In memory
// each of three claims meets a dead spare: the first the spare of New, the
// next ones the replacements, each closed by the server before the claim.
// Over TCP, in real time, one claim, and an io-timeout longer than a stall
// between a claim's dial and its ACQUIRE on a loaded machine.
func TestSpareClosedByIOTimeout(t *testing.T) {
	for _, sd := range spareDialers {
		t.Run(sd.name, func(t *testing.T) {
			timeout, claims := 100*time.Millisecond, 3
			if sd.d != nil {
				timeout, claims = time.Second, 1
			}
			spareTest(t, sd.d, server.Config{IOTimeout: timeout}, func(t *testing.T, srv *monolocktest.Server, d Dialer) {
				// A max age far above the server's io-timeout: the spare dies.
				c := New(Config{Address: srv.Addr, Dialer: d, Spares: 1, SpareMaxAge: time.Hour})
				defer c.Close()
				waitFor(t, "the spare to connect", func() bool { return srv.Server().Stats().Connections == 1 })
				for i := range claims {
					if sd.d == nil {
						// In the bubble: let the replacement spare be
						// dialled and accepted first, or "no connection"
						// could be one not yet accepted, not one closed.
						synctest.Wait()
					}
					waitFor(t, "the server to close the spare", func() bool {
						return idleSpares(c) == 1 && srv.Server().Stats().Connections == 0
					})
					l, err := c.Acquire(t.Context(), "io-timeout", 5*time.Second)
					if err != nil {
						t.Fatalf("claim %d: %v", i, err)
					}
					l.Release()
				}
				if n := c.spares.dead.Load(); n != int64(claims) {
					t.Errorf("%d dead spares seen, want %d", n, claims)
				}
			})
		})
	}
}

// TestSpareClosedByRestart: a server restart on the same address closes
// every spare; the next claim is granted by the new server.
func TestSpareClosedByRestart(t *testing.T) {
	for _, sd := range spareDialers {
		t.Run(sd.name, func(t *testing.T) {
			spareTest(t, sd.d, server.Config{}, func(t *testing.T, srv *monolocktest.Server, d Dialer) {
				c := New(Config{Address: srv.Addr, Dialer: d, Spares: 2, SpareMaxAge: time.Hour})
				defer c.Close()
				waitFor(t, "the spares to connect", func() bool { return srv.Server().Stats().Connections == 2 })
				srv.Restart(t)
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				l, err := c.Acquire(ctx, "restart", 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := srv.Server().Lock("restart"); !ok {
					t.Error("the new server has no such lock")
				}
				if n := c.spares.dead.Load(); n < 1 {
					t.Errorf("%d dead spares seen, want at least 1", n)
				}
				l.Release()
			})
		})
	}
}

// TestCloseClosesSparesOnServer: Close ends the spares' connections on the
// server side too; claims after Close still work, each on its own dial,
// and no spare comes back, not even after a spare's max age.
func TestCloseClosesSparesOnServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := monolocktest.NewPipeServer(t, server.Config{})
		c := New(Config{Address: srv.Addr, Dialer: srv, Spares: 3})
		connections := func(when string, want int) {
			t.Helper()
			synctest.Wait()
			if n := srv.Server().Stats().Connections; n != want {
				t.Errorf("%s: %d connections, want %d", when, n, want)
			}
		}
		connections("at New", 3)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		connections("after Close", 0)
		l, err := c.Acquire(t.Context(), "after-close", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		connections("while a claim after Close is held", 1)
		l.Release()
		connections("after the claim's release", 0)
		time.Sleep(2 * DefaultSpareMaxAge)
		connections("two max ages later", 0)
	})
}

// recordingDialer records the connections its Dialer returns; hide makes
// them hiddenConns.
type recordingDialer struct {
	d    Dialer
	hide bool

	mu    sync.Mutex
	conns []net.Conn
}

func (r *recordingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := r.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if r.hide {
		c = hiddenConn{c}
	}
	r.mu.Lock()
	r.conns = append(r.conns, c)
	r.mu.Unlock()
	return c, nil
}

func (r *recordingDialer) first() net.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns[0]
}

// TestTLSSpare: with a *tls.Dialer a spare has its TLS handshake done in
// advance, and the claim is made on it; a TLS spare the server closed (its
// close_notify is no answer) is replaced unseen, also when found only by
// its ACQUIRE. Over TCP in real time: the io-timeouts are long enough for
// a TLS handshake on a loaded machine, and the steps wait for events.
func TestTLSSpare(t *testing.T) {
	ca := testpki.NewCA(t, "spares")
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{ca.Server(t).TLS}}
	newDialer := func(hide bool) *recordingDialer {
		return &recordingDialer{d: &tls.Dialer{Config: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}}, hide: hide}
	}
	t.Run("used", func(t *testing.T) {
		// The default io-timeout (5s) outlives the spare (3s): the
		// server does not close it first.
		srv := monolocktest.NewServerConfig(t, server.Config{TLSConfig: tlsConfig})
		d := newDialer(false)
		c := New(Config{Address: srv.Addr, Dialer: d, Spares: 1})
		defer c.Close()
		waitFor(t, "the spare to be ready", func() bool { return idleSpares(c) == 1 })
		l, err := c.Acquire(t.Context(), "tls", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		if l.conn != d.first() {
			t.Error("the claim did not use the spare")
		}
	})
	for _, hide := range []bool{false, true} {
		t.Run(fmt.Sprintf("closed by io-timeout/hidden=%v", hide), func(t *testing.T) {
			srv := monolocktest.NewServerConfig(t, server.Config{IOTimeout: time.Second, TLSConfig: tlsConfig})
			c := New(Config{Address: srv.Addr, Dialer: newDialer(hide), Spares: 1, SpareMaxAge: time.Hour})
			defer c.Close()
			waitFor(t, "the spare to be ready", func() bool { return idleSpares(c) == 1 })
			waitFor(t, "the server to close the spare", func() bool { return srv.Server().Stats().Connections == 0 })
			l, err := c.Acquire(t.Context(), "tls", 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
			if n := c.spares.dead.Load(); n < 1 {
				t.Errorf("%d dead spares seen, want at least 1", n)
			}
		})
	}
}
