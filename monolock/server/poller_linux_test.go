package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// parked waits until exactly n sessions are parked in the poller, and
// returns their socket numbers. A session parks just after its answer is
// written, so the wait is short; its bound only turns a hang into a
// failure.
func parked(t *testing.T, s *server.Server, n int) map[uint64]int {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		p := server.ParkedSockets(s)
		if len(p) == n {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions parked, want %d", len(p), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// An idle plain-TCP session waits in the poller and holds no goroutine:
// a goroutine's stack and record were two thirds of its memory.
func TestIdleTCPSessionsHoldNoGoroutine(t *testing.T) {
	const sessions = 50
	ts := monolocktest.NewServer(t)
	for i := range sessions {
		c := dial(t, ts.Addr)
		c.acquire(fmt.Sprint("idle-", i), time.Minute)
		c.expect(protocol.TypeAcquired)
		c.heartbeat() // the keep-alive's path leaves it idle too
		c.expect(protocol.TypeAcquired)
	}
	// A session's goroutine exits just after its answer is written: wait
	// for that, within a bound that only turns a hang into a failure.
	held := sessionGoroutines()
	for deadline := time.Now().Add(wait); len(held) > 0 && time.Now().Before(deadline); held = sessionGoroutines() {
		time.Sleep(time.Millisecond)
	}
	if len(held) > 0 {
		t.Fatalf("%d idle sessions hold %d goroutines, want 0; the first:\n%s", sessions, len(held), held[0])
	}
}

// sessionGoroutines returns the stacks of goroutines serving a session.
func sessionGoroutines() []string {
	buf := make([]byte, 1<<22)
	var found []string
	for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "monolock/server.(*session)") || strings.Contains(g, "monolock/server.(*event)") {
			found = append(found, g)
		}
	}
	return found
}

// gatedListener accepts one connection per receive from next, so that a
// test decides when the server takes its next socket number.
type gatedListener struct {
	net.Listener
	next chan struct{}
}

func (l gatedListener) Accept() (net.Conn, error) {
	<-l.next
	return l.Listener.Accept()
}

// A session ended by a push while its bytes keep arriving is finished,
// and the next connection, given the same socket number, is served as
// itself: the poller keys sessions by id, and a closed session's socket is
// never registered, read or re-armed under its number again.
func TestPollerServesAReusedSocketNumber(t *testing.T) {
	s, err := server.New(server.Config{Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gate := gatedListener{Listener: l, next: make(chan struct{}, 1)}
	go s.Serve(gate)
	t.Cleanup(func() { s.Close() })

	reused := 0
	for round := range 3 {
		name := fmt.Sprint("reuse-", round)
		gate.next <- struct{}{}
		a := dial(t, l.Addr().String())
		a.acquire(name, time.Minute)
		a.expect(protocol.TypeAcquired)
		var fdA int
		for _, fd := range parked(t, s, 1) {
			fdA = fd
		}
		// Dialled now, accepted (given a socket number) once a is gone.
		b := dial(t, l.Addr().String())

		sent := make(chan struct{})
		go func() {
			defer close(sent)
			hb := protocol.AppendHeartbeat(nil)
			for range 2000 {
				if _, err := a.conn.Write(hb); err != nil {
					return
				}
			}
		}()
		if _, err := s.ForceRelease(name); err != nil {
			t.Fatal(err)
		}
		<-sent
		// The client keeps its socket (and its number) and half-closes,
		// ending the server's linger once it has read everything.
		a.conn.(*net.TCPConn).CloseWrite()
		for deadline := time.Now().Add(wait); s.Stats().Connections > 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("session a was not finished")
			}
		}
		gate.next <- struct{}{}
		b.acquire(name, time.Minute)
		token := b.expect(protocol.TypeAcquired).Token
		for _, fd := range parked(t, s, 1) {
			if fd == fdA {
				reused++
			}
		}
		for range 3 {
			b.heartbeat()
			if f := b.expect(protocol.TypeAcquired); f.Token != token {
				t.Fatalf("heartbeat answered with token %d, want %d", f.Token, token)
			}
		}
		a.conn.Close()
		b.conn.Close()
		for deadline := time.Now().Add(wait); s.Stats().Connections > 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("session b was not finished")
			}
		}
	}
	t.Logf("%d of 3 rounds reused the socket number", reused)
	if reused == 0 {
		t.Fatal("no round gave the new connection the old socket number: nothing was tested")
	}
}

// A parked session is woken, answered and ended over TCP as one with a
// goroutine of its own is: by its own bytes (a violation is answered with
// its ERROR), by a push from another goroutine (a promotion, an expiry, a
// shutdown) and by Close, each once it is parked.
func TestParkedSessionsOverTCP(t *testing.T) {
	t.Run("promotion", func(t *testing.T) {
		ts := monolocktest.NewServer(t)
		owner, waiter := dial(t, ts.Addr), dial(t, ts.Addr)
		owner.acquire("p", time.Minute)
		owner.expect(protocol.TypeAcquired)
		waiter.acquire("p", time.Minute)
		waiter.expect(protocol.TypeWaiting)
		parked(t, ts.Server(), 2)
		owner.conn.Close()
		waiter.expect(protocol.TypeAcquired)
		waiter.heartbeat()
		waiter.expect(protocol.TypeAcquired)
	})
	t.Run("violation", func(t *testing.T) {
		ts := monolocktest.NewServer(t)
		c := dial(t, ts.Addr)
		c.acquire("v", time.Minute)
		c.expect(protocol.TypeAcquired)
		parked(t, ts.Server(), 1)
		c.send([]byte{0x7f})
		c.expectError(protocol.CodeUnknownType)
	})
	t.Run("expiry", func(t *testing.T) {
		ts := monolocktest.NewServer(t)
		c := dial(t, ts.Addr)
		c.acquire("e", 50*time.Millisecond)
		c.expect(protocol.TypeAcquired)
		c.expectClosed()
		if n := metric(t, ts.Server(), `monolock_releases_total{reason="expired"}`); n != 1 {
			t.Errorf("expired releases = %v", n)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		ts := monolocktest.NewServer(t)
		c := dial(t, ts.Addr)
		c.acquire("s", time.Minute)
		c.expect(protocol.TypeAcquired)
		parked(t, ts.Server(), 1)
		done := make(chan error, 1)
		go func() { done <- ts.Server().Shutdown(context.Background()) }()
		c.expectError(protocol.CodeShuttingDown)
		c.conn.Close() // ends the server's linger
		if err := <-done; err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	})
	t.Run("close", func(t *testing.T) {
		ts := monolocktest.NewServer(t)
		c := dial(t, ts.Addr)
		c.acquire("c", time.Minute)
		c.expect(protocol.TypeAcquired)
		parked(t, ts.Server(), 1)
		ts.Server().Close() // returns once every session is finished
		c.expectClosed()
		if st := ts.Server().Stats(); st.Connections != 0 || st.LocksHeld != 0 {
			t.Errorf("after Close: %+v", st)
		}
	})
}

// A peer that sends heartbeats and never reads its answers fills its
// socket's send buffer; the answers the poller cannot write at once go on
// in the session's own goroutine, so every other session is still served.
func TestPollerIsNotStalledByAPeerThatDoesNotRead(t *testing.T) {
	ts := monolocktest.NewServer(t)
	stuck := dial(t, ts.Addr)
	stuck.acquire("stuck", time.Minute)
	stuck.expect(protocol.TypeAcquired)
	// Heartbeats a few at a time, so that the poller reads each batch
	// whole and would write its answers itself.
	batch := bytes.Repeat([]byte{byte(protocol.TypeHeartbeat)}, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		stuck.conn.SetWriteDeadline(time.Now().Add(wait))
		for { // until the server stops reading it, and the deadline or the close
			if _, err := stuck.conn.Write(batch); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { stuck.conn.Close(); <-done })
	// Wait until the stuck session's answers wait for the socket to drain.
	for deadline := time.Now().Add(wait); ; time.Sleep(time.Millisecond) {
		if g := sessionGoroutines(); len(g) == 1 && strings.Contains(g[0], "[IO wait") && strings.Contains(g[0], "(*session).flush") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stuck session's answers never waited in a goroutine: %q", sessionGoroutines())
		}
	}

	c := dial(t, ts.Addr)
	c.acquire("other", time.Minute)
	c.expect(protocol.TypeAcquired)
	for range 100 {
		c.conn.SetReadDeadline(time.Now().Add(wait))
		c.heartbeat()
		c.expect(protocol.TypeAcquired)
	}
}
