package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// silence is how long a read waits before the test calls the path
// silent; closes and answers, when they come, come far sooner.
const silence = 500 * time.Millisecond

// eventually bounds waits for something that must happen.
const eventually = 10 * time.Second

// startRedis runs the host's redis-server on a free loopback port as a
// child process and returns its address.
func startRedis(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("redis-server not installed (apt-get install -y redis-server); with CI set this is a failure")
		}
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	logs, err := os.Create(filepath.Join(t.TempDir(), "redis.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited; logs.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			rc := &respConn{Conn: c, r: bufio.NewReader(c)}
			_, err = rc.do("PING", time.Second)
			c.Close()
			if err == nil {
				return addr
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logs.Name())
			t.Fatalf("redis-server did not answer: %v\n%s", err, out)
		}
		select {
		case err := <-exited:
			exited <- err
			out, _ := os.ReadFile(logs.Name())
			t.Fatalf("redis-server exited: %v\n%s", err, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// respConn speaks just enough RESP for the tests, over a raw socket, so
// that every timeout, EOF and reset is seen as it is.
type respConn struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *respConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, eventually)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &respConn{Conn: c, r: bufio.NewReader(c)}
}

// do sends an inline command and reads a one-line reply, or a bulk
// string's content, within wait.
func (c *respConn) do(cmd string, wait time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(c, cmd+"\r\n"); err != nil {
		return "", err
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "$") {
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "(nil)", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return line, nil
}

func mustPing(t *testing.T, c *respConn) {
	t.Helper()
	if got, err := c.do("PING", eventually); err != nil || got != "+PONG" {
		t.Fatalf("PING through the proxy: %q, %v", got, err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// connectedClients asks the server directly how many clients it has,
// counting this asking connection.
func connectedClients(t *testing.T, redisAddr string) int {
	t.Helper()
	c := dial(t, redisAddr)
	defer c.Close()
	info, err := c.do("INFO clients", eventually)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "connected_clients:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatalf("no connected_clients in %q", info)
	return 0
}

// waitClients waits until the server counts want clients.
func waitClients(t *testing.T, redisAddr string, want int) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		got := connectedClients(t, redisAddr)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server has %d clients, want %d", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBlackholeRedis checks the blackhole with a real Redis: silence in
// both directions, with the connection neither reset nor closed on either
// side, then a restore after which new connections work.
func TestBlackholeRedis(t *testing.T) {
	redisAddr := startRedis(t)
	p := New()
	defer p.Close()
	link, err := p.Link("A->redis", redisAddr)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, link.Addr())
	mustPing(t, c)
	idle := dial(t, link.Addr()) // a second connection that will try to close
	mustPing(t, idle)
	waitClients(t, redisAddr, 3) // c, idle, and the asking connection

	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if link.State() != Blackhole {
		t.Errorf("state = %s", link.State())
	}
	// The write is swallowed, the reply never comes: a timeout, not EOF
	// and not a reset.
	_, err = c.do("PING", silence)
	if !isTimeout(err) {
		t.Fatalf("PING into the blackhole: %v, want a timeout", err)
	}
	// Still silence, and still writable: nothing closed the socket.
	if _, err := c.do("PING", silence); !isTimeout(err) {
		t.Fatalf("second PING into the blackhole: %v, want a timeout", err)
	}
	// A new connection is accepted but hears nothing either.
	fresh := dial(t, link.Addr())
	if _, err := fresh.do("PING", silence); !isTimeout(err) {
		t.Fatalf("PING on a new connection into the blackhole: %v, want a timeout", err)
	}
	// A client closing is not passed on: the server keeps all its
	// connections (c, idle, fresh, the asking one), as after a host loss.
	idle.Close()
	time.Sleep(silence) // give a wrongly forwarded close time to arrive
	if n := connectedClients(t, redisAddr); n != 4 {
		t.Errorf("server has %d clients during the blackhole, want 4 (a close got through?)", n)
	}

	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	// The connections that lived through it end, on both sides.
	c.SetDeadline(time.Now().Add(eventually))
	if _, err := c.r.ReadByte(); err == nil || isTimeout(err) {
		t.Errorf("read on a blackholed connection after restore: %v, want the connection ended", err)
	}
	waitClients(t, redisAddr, 1)
	// New connections pass.
	mustPing(t, dial(t, link.Addr()))
}

// TestReset checks that Reset ends live connections at once and keeps
// the address, and that a reset blackholed link stays blackholed.
func TestReset(t *testing.T) {
	redisAddr := startRedis(t)
	p := New()
	defer p.Close()
	link, err := p.Link("A->redis", redisAddr)
	if err != nil {
		t.Fatal(err)
	}
	addr := link.Addr()
	c := dial(t, addr)
	mustPing(t, c)
	if err := link.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.do("PING", eventually); err == nil || isTimeout(err) {
		t.Errorf("PING after reset: %v, want the connection ended", err)
	}
	if link.Addr() != addr {
		t.Errorf("address moved from %s to %s", addr, link.Addr())
	}
	mustPing(t, dial(t, addr))

	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if err := link.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, err := dial(t, addr).do("PING", silence); !isTimeout(err) {
		t.Errorf("PING after resetting a blackholed link: %v, want a timeout", err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	mustPing(t, dial(t, addr))
}

// TestViews gives two clients their own paths to three servers: A is cut
// from one of them while B still reaches all.
func TestViews(t *testing.T) {
	servers := []string{startRedis(t), startRedis(t), startRedis(t)}
	p := New()
	defer p.Close()
	a, err := p.View("A", servers)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.View("B", servers)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ReachOnly(0, 1); err != nil {
		t.Fatal(err)
	}
	for i, addr := range a.Addrs() {
		c := dial(t, addr)
		_, err := c.do("PING", silence)
		if reach := i < 2; reach != (err == nil) {
			t.Errorf("A to server %d: %v, want reachable=%v", i, err, reach)
		}
	}
	for _, addr := range b.Addrs() {
		mustPing(t, dial(t, addr))
	}
	if err := a.ReachOnly(3); err == nil {
		t.Error("ReachOnly accepted a server A does not have")
	}
	if err := a.ReachAll(); err != nil {
		t.Fatal(err)
	}
	mustPing(t, dial(t, a.Addrs()[2]))
}

func TestMeasureOverhead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o, err := MeasureOverhead(ctx, 500)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(o)
	if o.Samples != 500 || o.Direct.P50 <= 0 || o.Proxied.P50 <= 0 || o.Proxied.P99 < o.Proxied.P50 {
		t.Errorf("implausible overhead: %+v", o)
	}
	cancel()
	if _, err := MeasureOverhead(ctx, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("MeasureOverhead after cancel: %v", err)
	}
}

// readUntil reads from c until a line holding want arrives, or wait ends.
func (c *respConn) readUntil(want string, wait time.Duration) error {
	c.SetReadDeadline(time.Now().Add(wait))
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return err
		}
		if strings.Contains(line, want) {
			return nil
		}
	}
}

// TestBlackholeOneWay checks each one-sided blackhole with a real Redis:
// a subscriber's connection shows whether the server's traffic still
// reaches the client, a direct connection whether the client's commands
// still reach the server.
func TestBlackholeOneWay(t *testing.T) {
	redisAddr := startRedis(t)
	p := New()
	defer p.Close()
	link, err := p.Link("A->redis", redisAddr)
	if err != nil {
		t.Fatal(err)
	}
	direct := dial(t, redisAddr)
	for _, tt := range []struct {
		name  string
		apply func() error
		state State
		// up: the client's commands reach the server; down: the
		// server's messages reach the client.
		up, down bool
	}{
		{"upstream", link.BlackholeUpstream, BlackholeUp, false, true},
		{"downstream", link.BlackholeDownstream, BlackholeDown, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sub := dial(t, link.Addr())
			if _, err := sub.do("SUBSCRIBE ch-"+tt.name, eventually); err != nil {
				t.Fatal(err)
			}
			if err := sub.readUntil("ch-"+tt.name, eventually); err != nil { // the rest of the confirmation
				t.Fatal(err)
			}
			cmd := dial(t, link.Addr())
			mustPing(t, cmd)

			if err := tt.apply(); err != nil {
				t.Fatal(err)
			}
			if got := link.State(); got != tt.state {
				t.Errorf("state = %s, want %s", got, tt.state)
			}
			// The client's command: its reply never comes either way.
			if _, err := cmd.do("SET k-"+tt.name+" v", silence); !isTimeout(err) {
				t.Fatalf("SET through a one-way blackhole: %v, want a timeout", err)
			}
			got, err := direct.do("GET k-"+tt.name, eventually)
			if err != nil {
				t.Fatal(err)
			}
			if executed := got == "v"; executed != tt.up {
				t.Errorf("the server executed the client's SET: %v, want %v", executed, tt.up)
			}
			// The server's message to the subscriber.
			if _, err := direct.do("PUBLISH ch-"+tt.name+" hello", eventually); err != nil {
				t.Fatal(err)
			}
			wait := eventually
			if !tt.down {
				wait = silence
			}
			err = sub.readUntil("hello", wait)
			if arrived := err == nil; arrived != tt.down {
				t.Errorf("the published message reached the client: %v (%v), want %v", arrived, err, tt.down)
			}

			// A full blackhole adds the other direction; Restore ends
			// the connections and new ones pass.
			if err := link.Blackhole(); err != nil || link.State() != Blackhole {
				t.Fatalf("Blackhole after one way: state %s, %v", link.State(), err)
			}
			if err := link.Restore(); err != nil {
				t.Fatal(err)
			}
			if link.State() != Pass {
				t.Errorf("state after restore = %s", link.State())
			}
			cmd.SetDeadline(time.Now().Add(eventually))
			if _, err := cmd.r.ReadByte(); err == nil || isTimeout(err) {
				t.Errorf("read after restore: %v, want the connection ended", err)
			}
			mustPing(t, dial(t, link.Addr()))
		})
	}

	// Reset keeps a one-way blackhole for the connections that follow.
	if err := link.BlackholeDownstream(); err != nil {
		t.Fatal(err)
	}
	if err := link.Reset(); err != nil {
		t.Fatal(err)
	}
	if link.State() != BlackholeDown {
		t.Errorf("state after reset = %s, want %s", link.State(), BlackholeDown)
	}
	if _, err := dial(t, link.Addr()).do("PING", silence); !isTimeout(err) {
		t.Errorf("PING after resetting a link blackholed downstream: %v, want a timeout", err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
}
