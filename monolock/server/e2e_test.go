package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// wait is the generous bound on anything that should happen "at once".
const wait = 5 * time.Second

// rawClient speaks the protocol with raw bytes.
type rawClient struct {
	t    testing.TB
	conn net.Conn
}

func dial(t testing.TB, addr string) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, conn: c}
}

func (c *rawClient) send(b []byte) {
	c.t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(wait))
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *rawClient) acquire(name string, lease time.Duration) {
	c.t.Helper()
	ms, err := protocol.LeaseMillis(lease)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(protocol.AppendAcquire(nil, ms, name))
}

func (c *rawClient) heartbeat() { c.t.Helper(); c.send(protocol.AppendHeartbeat(nil)) }

// next reads one server frame within d.
func (c *rawClient) next(d time.Duration) (protocol.ServerFrame, error) {
	c.conn.SetReadDeadline(time.Now().Add(d))
	return protocol.ReadServerFrame(c.conn)
}

func (c *rawClient) expect(typ protocol.Type) protocol.ServerFrame {
	c.t.Helper()
	f, err := c.next(wait)
	if err != nil {
		c.t.Fatalf("reading %#x: %v", typ, err)
	}
	if f.Type != typ {
		c.t.Fatalf("got frame %+v, want type %#x", f, typ)
	}
	return f
}

func (c *rawClient) expectError(code protocol.Code) {
	c.t.Helper()
	f := c.expect(protocol.TypeError)
	if f.Code != code {
		c.t.Fatalf("ERROR code %#x (%q), want %#x", f.Code, f.Reason, code)
	}
	c.expectClosed()
}

// expectClosed checks that the server closes the connection.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(wait))
	var b [64]byte
	n, err := c.conn.Read(b[:])
	if err == nil || errors.Is(err, os_ErrDeadlineExceeded) {
		c.t.Fatalf("connection still open: read %d bytes %x, err %v", n, b[:n], err)
	}
}

// quiet checks that nothing arrives for d.
func (c *rawClient) quiet(d time.Duration) {
	c.t.Helper()
	if f, err := c.next(d); !errors.Is(err, os_ErrDeadlineExceeded) {
		c.t.Fatalf("expected silence, got %+v, %v", f, err)
	}
}

func TestTwoClientsOneLockPushPromotion(t *testing.T) {
	ts := monolocktest.NewServer(t)
	a, b := dial(t, ts.Addr), dial(t, ts.Addr)
	a.acquire("x", 10*time.Second)
	tokA := a.expect(protocol.TypeAcquired).Token
	b.acquire("x", 10*time.Second)
	b.expect(protocol.TypeWaiting)
	a.conn.Close()
	tokB := b.expect(protocol.TypeAcquired).Token // pushed: b sent nothing
	if tokB <= tokA {
		t.Fatalf("token %d after %d", tokB, tokA)
	}
	b.heartbeat()
	if f := b.expect(protocol.TypeAcquired); f.Token != tokB {
		t.Fatalf("heartbeat ack token %d, grant %d", f.Token, tokB)
	}
}

func TestOpsEndpoints(t *testing.T) {
	ts := monolocktest.NewServer(t)
	hs := httptest.NewServer(ts.Server().OpsHandler())
	defer hs.Close()
	c := dial(t, ts.Addr)
	c.acquire("m", time.Second)
	c.expect(protocol.TypeAcquired)
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, hs.URL+path); code != 200 || body != "ok\n" {
			t.Errorf("%s = %d %q", path, code, body)
		}
	}
	_, body := get(t, hs.URL+"/metrics")
	for _, want := range []string{
		"monolock_connections_active 1\n", "monolock_locks_held 1\n", "monolock_waiters 0\n",
		"monolock_acquires_total 1\n", "monolock_acl_denials_total 0\n",
		`monolock_releases_total{reason="graceful"} 0` + "\n", `monolock_releases_total{reason="expired"} 0`,
		`monolock_releases_total{reason="io_timeout"} 0`, `monolock_releases_total{reason="force"} 0`,
		`monolock_protocol_errors_total{code="0x13"} 0`, "monolock_connections_accepted_total 1\n",
		"monolock_accept_errors_total 0\n", "monolock_tls_handshake_errors_total 0\n", "monolock_heartbeats_total 0\n",
		"monolock_wait_seconds_sum ", "monolock_wait_seconds_count 1\n", "monolock_hold_seconds_count 0\n",
		"go_goroutines ", "go_heap_alloc_bytes ", "go_gc_cycles_total ",
		"# TYPE monolock_wait_seconds summary\n", "# TYPE monolock_heartbeats_total counter\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var (
	_ = bytes.Equal
	_ = context.Background
	_ = fmt.Sprint
	_ sync.Mutex
	_ = server.New
)
