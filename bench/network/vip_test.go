package network

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

// nameServer listens on every address of h at port and answers each
// connection with h's name, then each byte it reads with the name again.
func nameServer(t *testing.T, h *Host, port int) {
	t.Helper()
	l, err := h.Listen("tcp", netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(port)).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 1)
				for {
					if _, err := c.Write([]byte(h.Name())); err != nil {
						return
					}
					if _, err := c.Read(b); err != nil {
						return
					}
				}
			}()
		}
	}()
}

// ask writes a byte on c and returns the answer.
func ask(c net.Conn, first bool) (string, error) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if !first {
		if _, err := c.Write([]byte{1}); err != nil {
			return "", err
		}
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(c, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// A virtual IP reaches the host that holds it. An unfenced move sends new
// connections to the new holder and keeps the open ones on the old; a
// takeover sends everything to the new holder, whose kernel resets the
// old connections; a closed address reaches nobody.
func TestVirtualIPMoves(t *testing.T) {
	n := newTestNetwork(t, Profile{})
	a, b := addHost(t, n, "a", nil), addHost(t, n, "b", nil)
	const port = 7000
	nameServer(t, a, port)
	nameServer(t, b, port)
	v, err := n.AddVirtualIP(a)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.IP() == a.IP() || v.IP() == b.IP() || !n.Subnet().Contains(v.IP()) {
		t.Fatalf("virtual IP %s (hosts %s, %s; subnet %s)", v.IP(), a.IP(), b.IP(), n.Subnet())
	}
	addr := netip.AddrPortFrom(v.IP(), port).String()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	expect := func(c net.Conn, first bool, want string) {
		t.Helper()
		if got, err := ask(c, first); err != nil || got != want {
			t.Fatalf("answered by %q (%v), want %s", got, err, want)
		}
	}
	old := dial()
	expect(old, true, "a")

	if err := v.Move(b.IP(), true); err != nil {
		t.Fatal(err)
	}
	expect(dial(), true, "b")
	expect(old, false, "a") // an open connection keeps its host

	if err := v.Move(a.IP(), false); err != nil {
		t.Fatal(err)
	}
	moved := dial()
	expect(moved, true, "a")
	if err := v.Move(b.IP(), false); err != nil {
		t.Fatal(err)
	}
	// The takeover: b's kernel has no such connection and resets it.
	if got, err := ask(moved, false); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("an old connection after the takeover: %q, %v; want a reset", got, err)
	}
	expect(dial(), true, "b")
	if v.Holder() != b {
		t.Errorf("holder %v, want b", v.Holder())
	}

	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond); err == nil {
		c.Close()
		t.Error("reached a closed virtual IP")
	}
	if err := v.Move(a.IP(), false); !errors.Is(err, ErrClosed) {
		t.Errorf("Move after Close: %v", err)
	}
}

// A takeover from a host that was lost (its link cut) still reaches the
// new holder, and the lost host's packets stay dropped.
func TestVirtualIPTakeoverFromLostHost(t *testing.T) {
	n := newTestNetwork(t, Profile{})
	a, b := addHost(t, n, "a", nil), addHost(t, n, "b", nil)
	const port = 7000
	nameServer(t, a, port)
	nameServer(t, b, port)
	v, err := n.AddVirtualIP(a)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	addr := netip.AddrPortFrom(v.IP(), port).String()
	if err := a.Cut(true); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond); err == nil {
		c.Close()
		t.Fatal("reached the virtual IP on a lost host")
	}
	if err := v.Move(b.IP(), false); err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := ask(c, true); err != nil || got != "b" {
		t.Fatalf("answered by %q (%v), want b", got, err)
	}
}
