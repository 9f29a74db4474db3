package monolocktest

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// acquire opens a claim with raw protocol bytes and returns the first frame.
func acquire(t *testing.T, addr, name string) (net.Conn, protocol.ServerFrame) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(protocol.AppendAcquire(nil, 2000, name)); err != nil {
		t.Fatal(err)
	}
	f, err := protocol.ReadServerFrame(c)
	if err != nil {
		t.Fatal(err)
	}
	return c, f
}

func TestRestartKeepsAddressAndTokensIncrease(t *testing.T) {
	s := NewServer(t)
	c, f := acquire(t, s.Addr, "a")
	if f.Type != protocol.TypeAcquired {
		t.Fatalf("first frame %+v", f)
	}
	addr := s.Addr
	s.Restart(t)
	if s.Addr != addr {
		t.Fatalf("address changed: %s → %s", addr, s.Addr)
	}
	if _, err := protocol.ReadServerFrame(c); err == nil {
		t.Fatal("old connection still open after restart")
	}
	_, g := acquire(t, s.Addr, "a")
	if g.Type != protocol.TypeAcquired || g.Token <= f.Token {
		t.Fatalf("after restart: %+v, before: token %d", g, f.Token)
	}
	if n := len(s.Server().Locks(nil)); n != 1 {
		t.Fatalf("new server has %d locks", n)
	}
}

// TestPipeServer: in a bubble, a pipe server serves in-memory connections
// with distinct addresses, keeps its address across Restart with tokens
// increasing, and refuses dials once closed.
func TestPipeServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewPipeServer(t, server.Config{})
		claim := func(name string) (net.Conn, protocol.ServerFrame) {
			t.Helper()
			c, err := s.DialContext(t.Context(), "tcp", "ignored:1")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			if _, err := c.Write(protocol.AppendAcquire(nil, 2000, name)); err != nil {
				t.Fatal(err)
			}
			f, err := protocol.ReadServerFrame(c)
			if err != nil {
				t.Fatal(err)
			}
			return c, f
		}
		a, fa := claim("a")
		b, fb := claim("a")
		if fa.Type != protocol.TypeAcquired || fb.Type != protocol.TypeWaiting {
			t.Fatalf("frames %+v, %+v; want ACQUIRED, WAITING", fa, fb)
		}
		if a.LocalAddr().String() == b.LocalAddr().String() || a.RemoteAddr().String() != s.Addr {
			t.Errorf("addresses %v→%v and %v→%v: want distinct clients of %s", a.LocalAddr(), a.RemoteAddr(), b.LocalAddr(), b.RemoteAddr(), s.Addr)
		}
		info, _ := s.Server().Lock("a")
		if len(info.Waiters) != 1 || info.Waiters[0].RemoteAddr != b.LocalAddr().String() {
			t.Errorf("the server's waiter %+v, want %v", info.Waiters, b.LocalAddr())
		}

		// The bubble's clock starts at midnight and has not moved: the
		// restart waits for the next whole second, and 1ms.
		start := time.Now()
		s.Restart(t)
		if d := time.Since(start); d != time.Second+time.Millisecond {
			t.Errorf("restart took %v of the bubble's clock, want 1.001s", d)
		}
		if _, err := protocol.ReadServerFrame(a); err == nil {
			t.Fatal("old connection still open after restart")
		}
		_, g := claim("a")
		if g.Type != protocol.TypeAcquired || g.Token <= fa.Token {
			t.Fatalf("after restart: %+v, before: token %d", g, fa.Token)
		}

		s.Close()
		if _, err := s.DialContext(t.Context(), "", ""); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("dial after Close = %v, want connection refused", err)
		}
	})
}

// TestListener: Accept ends with net.ErrClosed at Close; a dial that
// nobody accepts ends with its context.
func TestListener(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewListener()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := l.DialContext(ctx, "", ""); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("unaccepted dial = %v, want context.DeadlineExceeded", err)
		}
		accepted := make(chan error, 1)
		go func() { _, err := l.Accept(); accepted <- err }()
		synctest.Wait()
		l.Close()
		if err := <-accepted; !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close = %v, want net.ErrClosed", err)
		}
		if l.Addr().Network() != "pipe" || l.Addr().String() != "pipe:0" {
			t.Errorf("Addr = %s %s", l.Addr().Network(), l.Addr())
		}
	})
}
