package monolocktest

import (
	"net"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/protocol"
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
