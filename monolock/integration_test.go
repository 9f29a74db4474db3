package monolock_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/internal/testpki"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

func newClient(t *testing.T, addr string) *monolock.Client {
	t.Helper()
	c := monolock.New(monolock.Config{Address: addr})
	return c
}

// queued waits until the server lists n waiters on name.
func queued(t *testing.T, srv *monolocktest.Server, name string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if info, ok := srv.Server().Lock(name); ok && len(info.Waiters) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters on %q never queued", n, name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDoGrantsTokenToFn(t *testing.T) {
	srv := monolocktest.NewServer(t)
	c := newClient(t, srv.Addr)
	var tokens []uint64
	for range 3 {
		err := c.Do(t.Context(), "jobs/nightly", time.Second, func(ctx context.Context, token uint64) error {
			info, ok := srv.Server().Lock("jobs/nightly")
			if !ok || info.Holder == nil || info.Holder.Token != token {
				t.Errorf("fn got token %d; server says %+v", token, info.Holder)
			}
			tokens = append(tokens, token)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Fatalf("tokens not increasing: %v", tokens)
		}
	}
	// Closing the connection is the release; the server sees it soon after.
	deadline := time.Now().Add(5 * time.Second)
	for _, ok := srv.Server().Lock("jobs/nightly"); ok; _, ok = srv.Server().Lock("jobs/nightly") {
		if time.Now().After(deadline) {
			t.Fatal("lock still live 5s after Do returned")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDoSerialises(t *testing.T) {
	srv := monolocktest.NewServer(t)
	c := newClient(t, srv.Addr)
	var inside, maxInside atomic.Int32
	var mu sync.Mutex
	var order []uint64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			err := c.Do(t.Context(), "shared", 2*time.Second, func(ctx context.Context, token uint64) error {
				n := inside.Add(1)
				defer inside.Add(-1)
				for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
				}
				mu.Lock()
				order = append(order, token)
				mu.Unlock()
				time.Sleep(30 * time.Millisecond)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if m := maxInside.Load(); m != 1 {
		t.Fatalf("%d fns ran at once, want 1", m)
	}
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			t.Fatalf("grants out of token order: %v", order)
		}
	}
}

// The server pushes the promotion: the waiter must not wait for its next
// heartbeat (15s with a 60s lease) to learn it owns the lock.
func TestWaiterPromotedWithoutHeartbeat(t *testing.T) {
	srv := monolocktest.NewServer(t)
	c := newClient(t, srv.Addr)
	a, err := c.Acquire(t.Context(), "x", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *monolock.Lock, 1)
	go func() {
		b, err := c.Acquire(t.Context(), "x", time.Minute)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	queued(t, srv, "x", 1)
	released := time.Now()
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	b := <-got
	if b == nil {
		return
	}
	defer b.Release()
	if d := time.Since(released); d > 3*time.Second {
		t.Fatalf("promotion took %v; the heartbeat interval is 15s, the push should be immediate", d)
	}
	if b.Token() <= a.Token() {
		t.Fatalf("waiter's token %d not above the first owner's %d", b.Token(), a.Token())
	}
}

// silentProxy forwards one TCP connection to target until silence is
// called; then it keeps both connections open and drops whatever arrives,
// like a network path that fails without a reset.
type silentProxy struct {
	addr   string
	silent atomic.Bool
}

func newSilentProxy(t *testing.T, target string) *silentProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &silentProxy{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Go(func() { p.pipe(out, in) })
			wg.Go(func() { p.pipe(in, out) })
		}
	})
	return p
}

func (p *silentProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := src.Read(buf)
		if err != nil {
			if !p.silent.Load() { // a silent path does not carry the close either
				dst.Close()
			}
			return
		}
		if p.silent.Load() {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// A network that goes silent: the holder's fn is cancelled within
// 0.8 × lease and before the server grants the lock to the next client.
func TestSilentNetworkCancelsFnBeforeNextGrant(t *testing.T) {
	const lease = time.Second
	srv := monolocktest.NewServer(t)
	proxy := newSilentProxy(t, srv.Addr)
	holder := newClient(t, proxy.addr)
	direct := newClient(t, srv.Addr)

	var silencedAt, cancelledAt, grantedAt time.Time
	var cause error
	running := make(chan struct{})
	holderDone := make(chan error, 1)
	go func() {
		holderDone <- holder.Do(t.Context(), "guarded", lease, func(ctx context.Context, token uint64) error {
			close(running)
			<-ctx.Done()
			cancelledAt, cause = time.Now(), context.Cause(ctx)
			return nil
		})
	}()
	<-running
	waiterDone := make(chan error, 1)
	go func() {
		waiterDone <- direct.Do(t.Context(), "guarded", lease, func(ctx context.Context, token uint64) error {
			grantedAt = time.Now()
			return nil
		})
	}()
	queued(t, srv, "guarded", 1)
	time.Sleep(300 * time.Millisecond) // a few heartbeats through the proxy
	silencedAt = time.Now()
	proxy.silent.Store(true)

	if err := <-holderDone; !errors.Is(err, monolock.ErrHeartbeatTimeout) {
		t.Fatalf("holder's Do = %v, want ErrHeartbeatTimeout joined in", err)
	}
	if err := <-waiterDone; err != nil {
		t.Fatalf("waiter's Do = %v", err)
	}
	if !errors.Is(cause, monolock.ErrHeartbeatTimeout) {
		t.Errorf("fn's ctx cause = %v, want ErrHeartbeatTimeout", cause)
	}
	if d := cancelledAt.Sub(silencedAt); d > 800*time.Millisecond+300*time.Millisecond {
		t.Errorf("fn cancelled %v after the network went silent; want within 0.8 × lease (800ms) plus scheduling slack", d)
	}
	if !cancelledAt.Before(grantedAt) {
		t.Fatalf("holder learned of the loss at +%v, after the waiter was granted at +%v", cancelledAt.Sub(silencedAt), grantedAt.Sub(silencedAt))
	}
	t.Logf("after silence: holder's fn cancelled at +%v, waiter granted at +%v (margin %v)",
		cancelledAt.Sub(silencedAt).Round(time.Millisecond), grantedAt.Sub(silencedAt).Round(time.Millisecond), grantedAt.Sub(cancelledAt).Round(time.Millisecond))
}

// A server restart under DoRetry: the queued claim loses its place, DoRetry
// reconnects, fn runs once with a token above every earlier one.
func TestDoRetryAcrossRestart(t *testing.T) {
	tests := []struct {
		name      string
		stop      func(t *testing.T, srv *monolocktest.Server)
		holderErr error
	}{
		{"crash", func(t *testing.T, srv *monolocktest.Server) {}, monolock.ErrConnectionClosed},
		{"graceful shutdown", func(t *testing.T, srv *monolocktest.Server) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if err := srv.Server().Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}, protocol.ErrShuttingDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := monolocktest.NewServer(t)
			c := newClient(t, srv.Addr)
			a, err := c.Acquire(t.Context(), "deploy", time.Second)
			if err != nil {
				t.Fatal(err)
			}
			runs := 0
			var token uint64
			done := make(chan error, 1)
			go func() {
				done <- c.DoRetry(t.Context(), "deploy", time.Second, func(ctx context.Context, tok uint64) error {
					runs++
					token = tok
					return nil
				})
			}()
			queued(t, srv, "deploy", 1)
			tt.stop(t, srv)
			srv.Restart(t)
			select {
			case <-a.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("holder did not notice the restart")
			}
			if err := a.Release(); !errors.Is(err, tt.holderErr) {
				t.Errorf("holder's Release after the stop = %v, want %v", err, tt.holderErr)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("DoRetry = %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("DoRetry did not get the lock after the restart")
			}
			if runs != 1 {
				t.Fatalf("fn ran %d times", runs)
			}
			if token <= a.Token() {
				t.Fatalf("token after restart %d not above %d", token, a.Token())
			}
		})
	}
}

func TestForceReleaseIsLossWithServerError(t *testing.T) {
	srv := monolocktest.NewServer(t)
	c := newClient(t, srv.Addr)
	l, err := c.Acquire(t.Context(), "x", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := srv.Server().ForceRelease("x")
	if err != nil || tok != l.Token() {
		t.Fatalf("ForceRelease = %d, %v; want %d", tok, err, l.Token())
	}
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after force-release")
	}
	var se *monolock.ServerError
	if !errors.As(l.Err(), &se) || se.Code != protocol.CodeClosedByAdmin || !se.Temporary() || !errors.Is(l.Err(), protocol.ErrClosedByAdmin) {
		t.Fatalf("Err = %v, want *ServerError 0x02", l.Err())
	}
}

// TLS and mTLS go through the Dialer: a server that requires a client
// certificate grants the lock.
func TestTLSDialer(t *testing.T) {
	ca := testpki.NewCA(t, "test CA")
	srvCert := ca.Server(t)
	clientCert := ca.Client(t, testpki.Subject{URIs: []string{"spiffe://test/ci"}})
	srv := monolocktest.NewServerConfig(t, server.Config{TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{srvCert.TLS},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.Pool(),
	}})
	c := monolock.New(monolock.Config{Address: srv.Addr, Dialer: &tls.Dialer{Config: &tls.Config{
		RootCAs:      ca.Pool(),
		Certificates: []tls.Certificate{clientCert.TLS},
	}}})
	err := c.Do(t.Context(), "tls-lock", time.Second, func(ctx context.Context, token uint64) error {
		if token == 0 {
			t.Error("token 0")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Plaintext against the TLS server fails and is not a grant.
	plain := newClient(t, srv.Addr)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if l, err := plain.Acquire(ctx, "tls-lock", time.Second); err == nil {
		l.Release()
		t.Fatal("plaintext client acquired a lock on a TLS server")
	}
}

// Short leases keep both sessions heartbeating every 100ms, so the
// promotion push often crosses a heartbeat in flight; the promoted client
// must keep the lock for several leases without a false loss.
func TestPromotionAmidHeartbeats(t *testing.T) {
	srv := monolocktest.NewServer(t)
	c := newClient(t, srv.Addr)
	const lease = 400 * time.Millisecond
	for i := range 3 {
		a, err := c.Acquire(t.Context(), "hot", lease)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *monolock.Lock, 1)
		go func() {
			b, err := c.Acquire(t.Context(), "hot", lease)
			if err != nil {
				t.Error(err)
			}
			got <- b
		}()
		queued(t, srv, "hot", 1)
		time.Sleep(time.Duration(250+37*i) * time.Millisecond) // queued across heartbeats
		if err := a.Release(); err != nil {
			t.Fatalf("first owner lost the lock while holding it: %v", err)
		}
		b := <-got
		if b == nil {
			return
		}
		select {
		case <-b.Done():
			t.Fatalf("round %d: promoted owner lost the lock: %v", i, b.Err())
		case <-time.After(3 * lease):
		}
		if err := b.Release(); err != nil {
			t.Fatalf("round %d: Release = %v", i, err)
		}
	}
}

// lockGoroutines returns the stacks of goroutines still doing client work.
// A goroutine that has signalled its exit to Release (wg.Done is deferred)
// can be caught in its function's epilogue: runnable, with the goroutine's
// own function as the only client frame. Those are not counted.
func lockGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "monolock-bench/monolock.(*Lock)") && !strings.Contains(g, "monolock-bench/monolock.(*keeper)") {
			continue
		}
		lines := strings.Split(g, "\n")
		if len(lines) > 1 && strings.HasSuffix(lines[0], "[runnable]:") &&
			(strings.HasPrefix(lines[1], "github.com/monolock/monolock-bench/monolock.(*Lock).read(") ||
				strings.HasPrefix(lines[1], "github.com/monolock/monolock-bench/monolock.(*Lock).start.func1(")) {
			continue // past wg.Done, returning
		}
		found = append(found, g)
	}
	return found
}

// No goroutine outlives its Lock: by the time Release (or a failed or
// cancelled Acquire) returns, the reader and the keeper have exited.
func TestNoGoroutineOutlivesLock(t *testing.T) {
	srv := monolocktest.NewServer(t)
	c := newClient(t, srv.Addr)
	check := func(when string) {
		t.Helper()
		if g := lockGoroutines(); len(g) > 0 {
			t.Fatalf("%s: %d client goroutines left:\n%s", when, len(g), strings.Join(g, "\n\n"))
		}
	}
	for range 50 {
		l, err := c.Acquire(t.Context(), "g", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
		check("after Acquire+Release")
	}

	l, err := c.Acquire(t.Context(), "g", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	queuedDone := make(chan error, 1)
	go func() { _, err := c.Acquire(ctx, "g", time.Second); queuedDone <- err }()
	queued(t, srv, "g", 1)
	cancel()
	if err := <-queuedDone; err != context.Canceled {
		t.Fatalf("queued Acquire = %v", err)
	}
	if _, err := srv.Server().ForceRelease("g"); err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	l.Release()
	check("after a cancelled wait and a loss")

	err = c.Do(t.Context(), "g", time.Second, func(context.Context, uint64) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	check("after Do")
}
