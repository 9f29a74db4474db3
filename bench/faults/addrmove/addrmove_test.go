package addrmove

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// named starts a TCP server that greets every connection with its name
// and then echoes lines.
func named(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := io.WriteString(c, name+"\n"); err != nil {
					return
				}
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// dial connects through m and returns the connection, a reader on it and
// the server's greeting.
func dial(t *testing.T, m *Mover) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	c, err := net.Dial("tcp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("greeting: %v", err)
	}
	return c, r, line[:len(line)-1]
}

func echo(c net.Conn, r *bufio.Reader) (string, error) {
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

// A fenced move breaks every established connection (the client reads an
// RST, not a clean end): a client that waits for an answer at once, the
// others at their next segment (before it, nothing arrives); new dials
// reach the standby.
func TestFencedMoveResetsAndRedirects(t *testing.T) {
	primary, standby := named(t, "primary"), named(t, "standby")
	m, err := Listen(primary)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var olds []net.Conn
	var readers []*bufio.Reader
	for range 3 {
		c, r, who := dial(t, m)
		if who != "primary" {
			t.Fatalf("before the move: reached %s", who)
		}
		olds, readers = append(olds, c), append(readers, r)
	}
	// The forwarder registers a connection after its dial upstream;
	// the greeting came through it, so all three are registered.
	if n := m.Move(standby, true); n != 3 {
		t.Errorf("fenced move cut %d connections, want 3", n)
	}
	// Silent until the client sends: no reset, no end.
	_ = olds[0].SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := readers[0].ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("an old connection before its next segment: %v, want nothing", err)
	}
	_ = olds[0].SetDeadline(time.Now().Add(10 * time.Second))
	for i, c := range olds {
		_, err := echo(c, readers[i])
		if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
			t.Errorf("old connection %d after the move: %v, want a reset", i, err)
		}
	}
	if _, _, who := dial(t, m); who != "standby" {
		t.Errorf("after the move: reached %s", who)
	}
	if m.Target() != standby {
		t.Errorf("target %s", m.Target())
	}
}

// silent starts a TCP server that greets every connection and then only
// reads, telling got about each read: a server that stopped answering.
func silent(t *testing.T, got chan<- struct{}) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := io.WriteString(c, "silent\n"); err != nil {
					return
				}
				b := make([]byte, 64)
				for {
					if _, err := c.Read(b); err != nil {
						return
					}
					got <- struct{}{}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// A client that waits for an answer when the fenced move comes is reset
// at once, as its unanswered segment, sent again, meets the new holder's
// reset.
func TestFencedMoveResetsAWaitingClientAtOnce(t *testing.T) {
	got := make(chan struct{}, 1)
	m, err := Listen(silent(t, got))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c, r, _ := dial(t, m)
	if _, err := io.WriteString(c, "unanswered\n"); err != nil {
		t.Fatal(err)
	}
	<-got // forwarded: the client waits
	m.Move(named(t, "standby"), true)
	if _, err := r.ReadByte(); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("a waiting client after the move: %v, want a reset without sending", err)
	}
}

// A move without the fence keeps the established connections on the old
// server (a DNS or load-balancer switch) while new dials reach the
// standby.
func TestUnfencedMoveKeepsOldConnections(t *testing.T) {
	primary, standby := named(t, "primary"), named(t, "standby")
	m, err := Listen(primary)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	old, r, _ := dial(t, m)
	if n := m.Move(standby, false); n != 0 {
		t.Errorf("unfenced move reset %d connections", n)
	}
	if line, err := echo(old, r); err != nil || line != "ping\n" {
		t.Errorf("old connection after the move: %q, %v", line, err)
	}
	if _, _, who := dial(t, m); who != "standby" {
		t.Errorf("after the move: reached %s", who)
	}
	if n := m.Established(); n != 2 {
		t.Errorf("%d connections established, want the old and the new", n)
	}
}

// A target that refuses makes the client's connection end at once.
func TestRefusedTargetEndsTheClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	m, err := Listen(dead)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c, err := net.Dial("tcp", m.Addr())
	if err != nil {
		return // reset before the handshake's end was seen: ended at once
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read through a refused target succeeded")
	}
}
