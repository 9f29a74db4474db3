package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// wait is the generous bound on anything that should happen "at once" on a
// busy machine.
const wait = 5 * time.Second

// rawClient speaks the protocol with raw bytes, not a client library.
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

// connect dials ts on its own transport: TCP, or in memory for a pipe
// server.
func connect(t testing.TB, ts *monolocktest.Server) *rawClient {
	t.Helper()
	c, err := ts.DialContext(context.Background(), "", "")
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, conn: c}
}

// inBubble runs f in a testing/synctest bubble against a server with cfg
// on in-memory connections: leases, heartbeats, io-timeouts and back-offs
// run on the bubble's fake clock, which moves only when every goroutine
// waits, so f asserts their durations exactly and takes no wall-clock time
// for them. Before inBubble returns the server is closed and every
// goroutine of the bubble has ended (synctest fails the test otherwise).
func inBubble(t *testing.T, cfg server.Config, f func(t *testing.T, ts *monolocktest.Server)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		f(t, monolocktest.NewPipeServer(t, cfg))
	})
}

// settled waits until every goroutine of the bubble waits (nothing is left
// to happen at this instant) and checks cond then.
func settled(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("not so once settled: %s", what)
	}
}

// elapsed checks, in a bubble, that exactly want passed since start.
func elapsed(t *testing.T, what string, start time.Time, want time.Duration) {
	t.Helper()
	if d := time.Since(start); d != want {
		t.Fatalf("%s after %v, want exactly %v", what, d, want)
	}
}

func (c *rawClient) send(b []byte) {
	c.t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(wait))
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func acquireFrame(name string, lease time.Duration) []byte {
	return protocol.AppendAcquire(nil, uint32(lease.Milliseconds()), name)
}

func (c *rawClient) acquire(name string, lease time.Duration) {
	c.t.Helper()
	c.send(acquireFrame(name, lease))
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
		c.t.Fatalf("reading frame %#x: %v", typ, err)
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

// expectClosed checks that the server closes the connection with nothing
// more sent.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(wait))
	var b [64]byte
	n, err := c.conn.Read(b[:])
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatalf("connection still open: read %x, err %v", b[:n], err)
	}
}

// quiet checks that nothing arrives and the connection stays open for d.
func (c *rawClient) quiet(d time.Duration) {
	c.t.Helper()
	if f, err := c.next(d); !errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatalf("expected silence, got %+v, %v", f, err)
	}
}

// heartbeatEvery sends n heartbeats, interval apart, checking that every
// answer is typ.
func (c *rawClient) heartbeatEvery(interval time.Duration, n int, typ protocol.Type) {
	c.t.Helper()
	for range n {
		time.Sleep(interval)
		c.heartbeat()
		c.expect(typ)
	}
}

// metric reads one sample from /metrics; line is the sample name with labels.
func metric(t *testing.T, s *server.Server, line string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	s.OpsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for l := range strings.Lines(rec.Body.String()) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), line+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("metric %s not exported", line)
	return 0
}

// eventually polls cond until it holds or wait passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestProtocolErrors(t *testing.T) {
	long := strings.Repeat("n", protocol.MaxNameLen+1)
	tests := []struct {
		name   string
		input  []byte
		before []protocol.Type // frames expected before the ERROR
		code   protocol.Code
	}{
		{"unsupported version", []byte{0x01, 2, 0, 0, 0, 100, 0, 1, 'a'}, nil, protocol.CodeUnsupportedVersion},
		{"version zero", []byte{0x01, 0}, nil, protocol.CodeUnsupportedVersion},
		{"heartbeat first", []byte{0x02}, nil, protocol.CodeFirstNotAcquire},
		{"unknown type first", []byte{0x7f}, nil, protocol.CodeFirstNotAcquire},
		{"server frame type first", []byte{0x12, 0, 0, 0, 0, 0, 0, 0, 1}, nil, protocol.CodeFirstNotAcquire},
		{"duplicate acquire", append(acquireFrame("a", time.Second), acquireFrame("a", time.Second)...), []protocol.Type{protocol.TypeAcquired}, protocol.CodeDuplicateAcquire},
		{"duplicate acquire after heartbeat", append(append(acquireFrame("a", time.Second), 0x02), acquireFrame("b", time.Second)...), []protocol.Type{protocol.TypeAcquired, protocol.TypeAcquired}, protocol.CodeDuplicateAcquire},
		{"unknown type after acquire", append(acquireFrame("a", time.Second), 0x7f), []protocol.Type{protocol.TypeAcquired}, protocol.CodeUnknownType},
		{"empty name", protocol.AppendAcquire(nil, 1000, ""), nil, protocol.CodeEmptyName},
		{"name too long", protocol.AppendAcquire(nil, 1000, long), nil, protocol.CodeNameTooLong},
		{"name of 65535 bytes", protocol.AppendAcquire(nil, 1000, strings.Repeat("x", 65535)), nil, protocol.CodeNameTooLong},
		{"name not UTF-8", protocol.AppendAcquire(nil, 1000, "a\xffb"), nil, protocol.CodeInvalidName},
		{"zero lease", protocol.AppendAcquire(nil, 0, "a"), nil, protocol.CodeInvalidLease},
		{"garbage after error is drained", append([]byte{0x02}, make([]byte, 100_000)...), nil, protocol.CodeFirstNotAcquire},
	}
	ts := monolocktest.NewServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, ts.Addr)
			go c.conn.Write(tt.input) // may block on a large input until drained
			for _, typ := range tt.before {
				c.expect(typ)
			}
			c.expectError(tt.code)
		})
	}
	// Every code above was counted, and the server still serves.
	for _, tt := range tests {
		if n := metric(t, ts.Server(), fmt.Sprintf(`monolock_protocol_errors_total{code="0x%02x"}`, uint8(tt.code))); n < 1 {
			t.Errorf("code %#x not counted", tt.code)
		}
	}
	c := dial(t, ts.Addr)
	c.acquire("a", time.Second)
	c.expect(protocol.TypeAcquired)
}

func TestValidNamesAreTakenVerbatim(t *testing.T) {
	ts := monolocktest.NewServer(t)
	for _, name := range []string{"A", "a", " a", "a ", "ä", "a\x00b", strings.Repeat("é", 127) + "x"} {
		c := dial(t, ts.Addr)
		c.acquire(name, 10*time.Second)
		c.expect(protocol.TypeAcquired) // all distinct locks
	}
	if n := len(ts.Server().Locks(nil)); n != 7 {
		t.Fatalf("%d locks, want 7 distinct names", n)
	}
}

// TestTwoClientsOneLockPushPromotion: the waiter is told at the instant the
// owner's connection closes, without sending anything.
func TestTwoClientsOneLockPushPromotion(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		a, b := connect(t, ts), connect(t, ts)
		a.acquire("x", 10*time.Second)
		tokA := a.expect(protocol.TypeAcquired).Token
		b.acquire("x", 10*time.Second)
		b.expect(protocol.TypeWaiting)
		b.heartbeat()
		b.expect(protocol.TypeWaiting)
		closed := time.Now()
		a.conn.Close()
		tokB := b.expect(protocol.TypeAcquired).Token // pushed: b sent nothing
		elapsed(t, "promotion", closed, 0)
		if tokB <= tokA {
			t.Fatalf("token %d after %d", tokB, tokA)
		}
		for range 3 {
			b.heartbeat()
			if f := b.expect(protocol.TypeAcquired); f.Token != tokB {
				t.Fatalf("heartbeat ack token %d, grant %d", f.Token, tokB)
			}
		}
		if n := metric(t, ts.Server(), `monolock_releases_total{reason="graceful"}`); n != 1 {
			t.Errorf("graceful releases = %v", n)
		}
	})
}

func TestFIFODepth10(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		owner := connect(t, ts)
		owner.acquire("q", 10*time.Second)
		last := owner.expect(protocol.TypeAcquired).Token
		var waiters []*rawClient
		for range 10 {
			w := connect(t, ts)
			w.acquire("q", 10*time.Second)
			w.expect(protocol.TypeWaiting)
			waiters = append(waiters, w)
		}
		if st := ts.Server().Stats(); st.LocksHeld != 1 || st.Waiters != 10 || st.Connections != 11 {
			t.Fatalf("Stats = %+v", st)
		}
		prev := owner
		for i, w := range waiters {
			prev.conn.Close()
			tok := w.expect(protocol.TypeAcquired).Token
			if tok <= last {
				t.Fatalf("waiter %d: token %d after %d", i, tok, last)
			}
			last = tok
			for _, later := range waiters[i+1:] { // nobody else moved
				later.quiet(time.Millisecond)
			}
			prev = w
		}
	})
}

// TestSilentOwnerExpires: an owner that says nothing after its ACQUIRE is
// ended exactly one lease later (not a moment before), and the waiter is
// promoted at that instant.
func TestSilentOwnerExpires(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		owner, waiter := connect(t, ts), connect(t, ts)
		owner.acquire("e", 300*time.Millisecond)
		owner.expect(protocol.TypeAcquired)
		heard := time.Now()
		waiter.acquire("e", 10*time.Second)
		waiter.expect(protocol.TypeWaiting)
		owner.expectClosed()
		elapsed(t, "silent owner closed", heard, 300*time.Millisecond)
		waiter.expect(protocol.TypeAcquired)
		elapsed(t, "waiter promoted", heard, 300*time.Millisecond)
		if n := metric(t, ts.Server(), `monolock_releases_total{reason="expired"}`); n != 1 {
			t.Errorf("expired releases = %v", n)
		}
	})
}

// TestHeartbeatsSlideTheLease: heartbeats keep an owner well past its
// lease; after the last one, silence ends it exactly one lease later.
func TestHeartbeatsSlideTheLease(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		owner, waiter := connect(t, ts), connect(t, ts)
		owner.acquire("h", 400*time.Millisecond)
		tok := owner.expect(protocol.TypeAcquired).Token
		waiter.acquire("h", 10*time.Second)
		waiter.expect(protocol.TypeWaiting)
		// 12 × 100ms = three leases of life from heartbeats alone; the
		// last gap is 399ms, 1ms short of the lease.
		for i := range 12 {
			gap := 100 * time.Millisecond
			if i == 11 {
				gap = 399 * time.Millisecond
			}
			time.Sleep(gap)
			owner.heartbeat()
			if f := owner.expect(protocol.TypeAcquired); f.Token != tok {
				t.Fatalf("ack token %d, want %d", f.Token, tok)
			}
		}
		heard := time.Now()
		waiter.quiet(time.Millisecond)
		if n := metric(t, ts.Server(), "monolock_heartbeats_total"); n != 12 {
			t.Errorf("heartbeats_total = %v", n)
		}
		// Silence now ends it, one lease after the last heartbeat.
		owner.expectClosed()
		elapsed(t, "owner expired", heard, 400*time.Millisecond)
		waiter.expect(protocol.TypeAcquired)
		elapsed(t, "waiter promoted", heard, 400*time.Millisecond)
	})
}

// TestSilentWaiterIsDropped: a waiter silent for its lease loses its place
// exactly then; the others keep their order; no release is counted.
func TestSilentWaiterIsDropped(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		owner, silent, patient := connect(t, ts), connect(t, ts), connect(t, ts)
		owner.acquire("w", 10*time.Second)
		owner.expect(protocol.TypeAcquired)
		silent.acquire("w", 300*time.Millisecond)
		silent.expect(protocol.TypeWaiting)
		heard := time.Now()
		patient.acquire("w", 10*time.Second)
		patient.expect(protocol.TypeWaiting)
		silent.expectClosed()
		elapsed(t, "silent waiter dropped", heard, 300*time.Millisecond)
		l, _ := ts.Server().Lock("w")
		if len(l.Waiters) != 1 || l.Waiters[0].RemoteAddr != patient.conn.LocalAddr().String() {
			t.Fatalf("queue after drop: %+v", l.Waiters)
		}
		owner.conn.Close()
		patient.expect(protocol.TypeAcquired)
		if n := metric(t, ts.Server(), `monolock_releases_total{reason="expired"}`); n != 0 {
			t.Errorf("a waiter's drop counted as a release: %v", n)
		}
	})
}

// TestByteByByteFrames: an ACQUIRE written one byte at a time is read
// whole. In memory each one-byte write is one read of the server's.
func TestByteByByteFrames(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		owner, waiter := connect(t, ts), connect(t, ts)
		owner.acquire("b", 10*time.Second)
		owner.expect(protocol.TypeAcquired)
		for _, b := range acquireFrame("b", 10*time.Second) {
			waiter.send([]byte{b})
			time.Sleep(2 * time.Millisecond)
		}
		waiter.expect(protocol.TypeWaiting)
		waiter.heartbeat()
		waiter.expect(protocol.TypeWaiting)
		owner.conn.Close()
		waiter.expect(protocol.TypeAcquired)
	})
}

func TestCoalescedFrames(t *testing.T) {
	ts := monolocktest.NewServer(t)
	c := dial(t, ts.Addr)
	c.send(append(acquireFrame("c", 10*time.Second), 0x02, 0x02, 0x02))
	tok := c.expect(protocol.TypeAcquired).Token
	for range 3 {
		if f := c.expect(protocol.TypeAcquired); f.Token != tok {
			t.Fatalf("ack %d, want %d", f.Token, tok)
		}
	}
}

func TestGarbageInput(t *testing.T) {
	ts := monolocktest.NewServer(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 30 {
		b := make([]byte, 1+rng.IntN(300))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		if i%2 == 1 { // garbage after a valid ACQUIRE
			b = append(acquireFrame(fmt.Sprintf("g%d", i), 10*time.Second), b...)
		}
		c := dial(t, ts.Addr)
		go c.conn.Write(b)
		// Whatever comes back is well-formed, and the connection ends with an
		// ERROR or (for a frame left incomplete) stays open until io-timeout;
		// closing our side must be enough either way.
		c.conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		for {
			f, err := protocol.ReadServerFrame(c.conn)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, syscall.ECONNRESET) {
					t.Fatalf("input %d: malformed answer: %v", i, err)
				}
				break
			}
			if f.Type == protocol.TypeError && f.Code < 0x10 {
				t.Fatalf("input %d: server condition %#x for garbage", i, f.Code)
			}
		}
		c.conn.Close()
	}
	c := dial(t, ts.Addr)
	c.acquire("after-garbage", 10*time.Second)
	c.expect(protocol.TypeAcquired)
	eventually(t, "garbage sessions to end", func() bool { return ts.Server().Stats().Connections == 1 })
}

// TestStalledFrameTimesOutWhileOthersAreServed: a frame left half-sent and
// a connection that never speaks both end exactly one io-timeout after they
// started, while another client is served throughout; an owner past its
// handshake may stay silent far longer than the io-timeout.
func TestStalledFrameTimesOutWhileOthersAreServed(t *testing.T) {
	inBubble(t, server.Config{IOTimeout: 300 * time.Millisecond}, func(t *testing.T, ts *monolocktest.Server) {
		start := time.Now()
		stalled := connect(t, ts)
		stalled.send(acquireFrame("s", 10*time.Second)[:5])
		mute := connect(t, ts) // never sends a byte

		other := connect(t, ts)
		other.acquire("s", 10*time.Second)
		other.expect(protocol.TypeAcquired)
		other.heartbeatEvery(50*time.Millisecond, 4, protocol.TypeAcquired)

		stalled.expectClosed()
		elapsed(t, "stalled frame ended", start, 300*time.Millisecond)
		mute.expectClosed()
		elapsed(t, "mute connection ended", start, 300*time.Millisecond)
		// The owner is beyond the handshake: silence up to its lease is
		// fine, well past the io-timeout.
		other.quiet(time.Second)
		other.heartbeat()
		other.expect(protocol.TypeAcquired)
	})
}

func TestShutdownFrames(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		srv := ts.Server()
		owner, waiter := connect(t, ts), connect(t, ts)
		owner.acquire("d", 10*time.Second)
		owner.expect(protocol.TypeAcquired)
		waiter.acquire("d", 10*time.Second)
		waiter.expect(protocol.TypeWaiting)
		idle := connect(t, ts) // connected, no ACQUIRE yet
		settled(t, "idle connection accepted", func() bool { return srv.Stats().Connections == 3 })

		ops := srv.OpsHandler()
		done := make(chan error, 1)
		go func() { done <- srv.Shutdown(context.Background()) }()
		// No promotion after shutdown begins: the waiter gets 0x01, not ACQUIRED.
		owner.expectError(protocol.CodeShuttingDown)
		waiter.expectError(protocol.CodeShuttingDown)
		idle.expectError(protocol.CodeShuttingDown)
		for _, path := range []string{"/healthz", "/readyz"} {
			rec := httptest.NewRecorder()
			ops.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			if rec.Code != http.StatusServiceUnavailable {
				t.Errorf("%s = %d during shutdown", path, rec.Code)
			}
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		case <-time.After(wait):
			t.Fatal("Shutdown did not return")
		}
		if c, err := ts.DialContext(context.Background(), "", ""); err == nil {
			c.Close()
			t.Error("still accepting after Shutdown")
		}
		// The documented reasons have no "shutdown": the server's orderly
		// close counts as graceful.
		if n := metric(t, srv, `monolock_releases_total{reason="graceful"}`); n != 1 {
			t.Errorf("shutdown releases = %v", n)
		}
	})
}

func TestServeReturnsErrServerClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := server.New(server.Config{})
		if err != nil {
			t.Fatal(err)
		}
		l := monolocktest.NewListener()
		done := make(chan error, 1)
		go func() { done <- srv.Serve(l) }()
		settled(t, "serving", func() bool {
			rec := httptest.NewRecorder()
			srv.OpsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
			return rec.Code == 200
		})
		srv.Close()
		if err := <-done; !errors.Is(err, server.ErrServerClosed) {
			t.Fatalf("Serve = %v", err)
		}
		if err := srv.Serve(l); !errors.Is(err, server.ErrServerClosed) {
			t.Fatalf("Serve after Close = %v", err)
		}
		if _, err := server.New(server.Config{IOTimeout: -1}); err == nil {
			t.Error("negative io-timeout accepted")
		}
	})
}

// TestTokensIncreaseAcrossRestart: a restarted server (a new lock table,
// more than a second later) continues above every earlier token.
func TestTokensIncreaseAcrossRestart(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		var last uint64
		for round := range 2 {
			for i := range 5 {
				c := connect(t, ts)
				c.acquire(fmt.Sprintf("r%d", i), 10*time.Second)
				tok := c.expect(protocol.TypeAcquired).Token
				if tok <= last {
					t.Fatalf("round %d: token %d not above %d", round, tok, last)
				}
				last = tok
			}
			ts.Restart(t)
		}
	})
}

func TestForceReleaseAndKick(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		srv := ts.Server()
		owner := connect(t, ts)
		owner.acquire("f", 10*time.Second)
		tok := owner.expect(protocol.TypeAcquired).Token
		w := make([]*rawClient, 3)
		for i := range w {
			w[i] = connect(t, ts)
			w[i].acquire("f", 10*time.Second)
			w[i].expect(protocol.TypeWaiting)
		}
		l, ok := srv.Lock("f")
		if !ok || l.Holder == nil || l.Holder.Token != tok || l.Holder.RemoteAddr != owner.conn.LocalAddr().String() ||
			l.Holder.Lease != 10*time.Second || l.Holder.Since.IsZero() || len(l.Waiters) != 3 || l.Waiters[2].QueuedAt.IsZero() {
			t.Fatalf("Lock(f) = %+v", l)
		}

		if err := srv.Kick("f", w[1].conn.LocalAddr().String()); err != nil {
			t.Fatalf("Kick: %v", err)
		}
		w[1].expectError(protocol.CodeClosedByAdmin)
		got, err := srv.ForceRelease("f")
		if err != nil || got != tok {
			t.Fatalf("ForceRelease = %d, %v; want %d", got, err, tok)
		}
		owner.expectError(protocol.CodeClosedByAdmin)
		if f := w[0].expect(protocol.TypeAcquired); f.Token <= tok {
			t.Fatalf("promoted token %d after %d", f.Token, tok)
		}
		w[2].quiet(time.Millisecond)
		if n := metric(t, srv, `monolock_releases_total{reason="force"}`); n != 1 {
			t.Errorf("force releases = %v", n)
		}

		errs := []struct {
			name string
			err  error
			want error
		}{
			{"force-release idle lock", func() error { _, err := srv.ForceRelease("idle"); return err }(), server.ErrNotHeld},
			{"kick unknown waiter", srv.Kick("f", "127.0.0.1:1"), server.ErrNoSuchWaiter},
			{"kick the owner", srv.Kick("f", w[0].conn.LocalAddr().String()), server.ErrNoSuchWaiter},
			{"kick on idle lock", srv.Kick("idle", w[2].conn.LocalAddr().String()), server.ErrNoSuchWaiter},
		}
		for _, e := range errs {
			if !errors.Is(e.err, e.want) {
				t.Errorf("%s: %v, want %v", e.name, e.err, e.want)
			}
		}
		if locks := srv.Locks(func(n string) bool { return n == "f" }); len(locks) != 1 || len(locks[0].Waiters) != 1 {
			t.Errorf("Locks(match f) = %+v", locks)
		}
		if locks := srv.Locks(func(string) bool { return false }); len(locks) != 0 {
			t.Errorf("Locks(match none) = %+v", locks)
		}
	})
}

// TestManyClientsNoOverlap runs 40 clients through one lock many times and
// checks that no two ever own it at once and that tokens increase in grant
// order.
func TestManyClientsNoOverlap(t *testing.T) {
	ts := monolocktest.NewServer(t)
	const clients, cycles = 40, 15
	var (
		owner  atomic.Int64
		mu     sync.Mutex
		tokens []uint64
		wg     sync.WaitGroup
	)
	errc := make(chan error, clients)
	for id := range int64(clients) {
		wg.Go(func() {
			for range cycles {
				if err := func() error {
					c, err := net.Dial("tcp", ts.Addr)
					if err != nil {
						return err
					}
					defer c.Close()
					c.SetDeadline(time.Now().Add(30 * time.Second))
					if _, err := c.Write(acquireFrame("hot", 10*time.Second)); err != nil {
						return err
					}
					for {
						f, err := protocol.ReadServerFrame(c)
						if err != nil {
							return err
						}
						if f.Type == protocol.TypeAcquired {
							if !owner.CompareAndSwap(0, id+1) {
								return fmt.Errorf("client %d granted while client %d owns", id+1, owner.Load())
							}
							mu.Lock()
							tokens = append(tokens, f.Token)
							mu.Unlock()
							owner.Store(0)
							return nil
						}
					}
				}(); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if len(tokens) != clients*cycles {
		t.Fatalf("%d grants, want %d", len(tokens), clients*cycles)
	}
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Fatalf("grant %d: token %d after %d", i, tokens[i], tokens[i-1])
		}
	}
	eventually(t, "all sessions to end", func() bool { return ts.Server().Stats() == server.Stats{} })
}

// flakyListener fails its first n Accepts with EMFILE.
type flakyListener struct {
	net.Listener
	n atomic.Int32
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestAcceptBacksOffOnEMFILE: failed accepts are counted and retried after
// 5ms, doubling to at most 1s; the server never gives up, and a shutdown
// cuts a back-off short.
func TestAcceptBacksOffOnEMFILE(t *testing.T) {
	serve := func(t *testing.T, failures int32) (*server.Server, *monolocktest.Listener, chan error) {
		srv, err := server.New(server.Config{Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		inner := monolocktest.NewListener()
		l := &flakyListener{Listener: inner}
		l.n.Store(failures)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		t.Cleanup(func() { srv.Close() }) // the bubble waits for Serve to return
		return srv, inner, served
	}
	synctest.Test(t, func(t *testing.T) {
		srv, l, _ := serve(t, 4)
		start := time.Now()
		conn, err := l.DialContext(t.Context(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		c := &rawClient{t: t, conn: conn}
		t.Cleanup(func() { conn.Close() })
		elapsed(t, "accepted", start, (5+10+20+40)*time.Millisecond)
		c.acquire("a", time.Second)
		c.expect(protocol.TypeAcquired)
		if n := metric(t, srv, "monolock_accept_errors_total"); n != 4 {
			t.Errorf("accept_errors_total = %v, want 4", n)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		srv, _, served := serve(t, 1000)
		// Failures at 0, 5, 15, 35, 75, 155, 315, 635 and 1275ms, then
		// every second: 17 by 10s.
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if n := metric(t, srv, "monolock_accept_errors_total"); n != 17 {
			t.Errorf("accept_errors_total after 10s = %v, want 17", n)
		}
		srv.Close()
		synctest.Wait() // within the 1s back-off that began at 9.275s
		select {
		case err := <-served:
			if !errors.Is(err, server.ErrServerClosed) {
				t.Errorf("Serve = %v, want ErrServerClosed", err)
			}
		default:
			t.Error("Serve still backing off after Close")
		}
	})
}

// TestNoGoroutineOutlivesItsSession checks that session goroutines exit
// with their sessions and with the server.
func TestNoGoroutineOutlivesItsSession(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		for i := range 20 {
			c := connect(t, ts)
			c.acquire(fmt.Sprint(i%3), 10*time.Second)
			c.next(wait)
			if i%2 == 0 {
				c.conn.Close()
			}
		}
		ts.Close()
		settled(t, "session goroutines to exit", func() bool {
			buf := make([]byte, 1<<20)
			return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "server.(*session)")
		})
	})
}

func TestOpsEndpoints(t *testing.T) {
	ts := monolocktest.NewServer(t)
	hs := httptest.NewServer(ts.Server().OpsHandler())
	defer hs.Close()
	c := dial(t, ts.Addr)
	c.acquire("m", 10*time.Second)
	c.expect(protocol.TypeAcquired)
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, hs.URL+path); code != 200 || body != "ok\n" {
			t.Errorf("%s = %d %q", path, code, body)
		}
	}
	code, body := get(t, hs.URL+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		"monolock_connections_active 1\n", "monolock_locks_held 1\n", "monolock_waiters 0\n",
		"monolock_acquires_total 1\n", "monolock_acl_denials_total 0\n",
		`monolock_releases_total{reason="graceful"} 0` + "\n", `monolock_releases_total{reason="expired"} 0` + "\n",
		`monolock_releases_total{reason="io_timeout"} 0` + "\n", `monolock_releases_total{reason="force"} 0` + "\n",
		`monolock_protocol_errors_total{code="0x13"} 0` + "\n", "monolock_connections_accepted_total 1\n",
		"monolock_accept_errors_total 0\n", "monolock_tls_handshake_errors_total 0\n", "monolock_heartbeats_total 0\n",
		"monolock_wait_seconds_sum ", "monolock_wait_seconds_count 1\n", "monolock_hold_seconds_sum 0\n", "monolock_hold_seconds_count 0\n",
		"go_goroutines ", "go_heap_alloc_bytes ", "go_gc_cycles_total ",
		"# TYPE monolock_wait_seconds summary\n", "# TYPE monolock_heartbeats_total counter\n", "# TYPE monolock_waiters gauge\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, _ := get(t, hs.URL+"/nope"); code != 404 {
		t.Errorf("/nope = %d", code)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestStalledWriteBoundedLaterInSession: the write deadline moves only
// when less than half an io-timeout is left, so a write stalled later in a
// session gives up between half an io-timeout and one io-timeout after it
// started: here the answer to the first heartbeat (200ms in, 100ms left)
// moved it to 500ms, and the answer to the second (250ms in, never read)
// gives up 250ms after it started.
func TestStalledWriteBoundedLaterInSession(t *testing.T) {
	inBubble(t, server.Config{IOTimeout: 300 * time.Millisecond}, func(t *testing.T, ts *monolocktest.Server) {
		owner := connect(t, ts)
		owner.acquire("stall", time.Minute)
		owner.expect(protocol.TypeAcquired)
		granted := time.Now()
		waiter := connect(t, ts)
		waiter.acquire("stall", time.Minute)
		waiter.expect(protocol.TypeWaiting)
		time.Sleep(200 * time.Millisecond)
		owner.heartbeat()
		owner.expect(protocol.TypeAcquired)
		time.Sleep(50 * time.Millisecond)
		owner.heartbeat() // its answer is never read
		stalled := time.Now()
		waiter.expect(protocol.TypeAcquired)
		elapsed(t, "promotion after the stalled write", stalled, 250*time.Millisecond)
		elapsed(t, "promotion after the grant", granted, 500*time.Millisecond)
		if n := metric(t, ts.Server(), `monolock_releases_total{reason="io_timeout"}`); n != 1 {
			t.Errorf("io_timeout releases = %v", n)
		}
	})
}

// TestStalledReaderTimesOutWrite: an owner that never reads its answer
// stalls the server's write (an in-memory connection has no buffer); the
// write gives up exactly one io-timeout later, the ownership ends with
// reason io_timeout and the next waiter is promoted, while another client
// is served throughout.
func TestStalledReaderTimesOutWrite(t *testing.T) {
	inBubble(t, server.Config{IOTimeout: 300 * time.Millisecond}, func(t *testing.T, ts *monolocktest.Server) {
		owner := connect(t, ts)
		owner.acquire("stall", time.Minute) // the ACQUIRED is never read
		settled(t, "owner granted", func() bool { l, ok := ts.Server().Lock("stall"); return ok && l.Holder != nil })
		granted := time.Now()
		waiter := connect(t, ts)
		waiter.acquire("stall", time.Minute)
		waiter.expect(protocol.TypeWaiting)
		other := connect(t, ts)
		other.acquire("other", time.Minute)
		other.expect(protocol.TypeAcquired)
		waiter.expect(protocol.TypeAcquired)
		elapsed(t, "promotion", granted, 300*time.Millisecond)
		if n := metric(t, ts.Server(), `monolock_releases_total{reason="io_timeout"}`); n != 1 {
			t.Errorf("io_timeout releases = %v", n)
		}
	})
}
