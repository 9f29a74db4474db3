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
	"testing/synctest"
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

// pipeClient is a client of srv on its in-memory connections (srv from
// monolocktest.NewPipeServer), for tests in a synctest bubble.
func pipeClient(srv *monolocktest.Server) *monolock.Client {
	return monolock.New(monolock.Config{Address: srv.Addr, Dialer: srv})
}

// queuedNow checks, in a bubble, that once every goroutine waits the
// server lists n waiters on name.
func queuedNow(t *testing.T, srv *monolocktest.Server, name string, n int) {
	t.Helper()
	synctest.Wait()
	if info, _ := srv.Server().Lock(name); len(info.Waiters) != n {
		t.Fatalf("%d waiters on %q, want %d", len(info.Waiters), name, n)
	}
}

// inBubble runs f in a testing/synctest bubble with a server on in-memory
// connections: leases, heartbeats and back-offs of client and server run
// on the bubble's fake clock, so f asserts their timing exactly and takes
// no wall-clock time for them.
func inBubble(t *testing.T, f func(t *testing.T, srv *monolocktest.Server)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		f(t, monolocktest.NewPipeServer(t, server.Config{}))
	})
}

func TestDoGrantsTokenToFn(t *testing.T) {
	inBubble(t, func(t *testing.T, srv *monolocktest.Server) {
		c := pipeClient(srv)
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
		// Closing the connection is the release; the server sees it at
		// once.
		synctest.Wait()
		if _, ok := srv.Server().Lock("jobs/nightly"); ok {
			t.Fatal("lock still live after Do returned")
		}
	})
}

func TestDoSerialises(t *testing.T) {
	inBubble(t, func(t *testing.T, srv *monolocktest.Server) {
		c := pipeClient(srv)
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
	})
}

// The server pushes the promotion: the waiter must not wait for its next
// heartbeat (15s with a 60s lease) to learn it owns the lock; it learns at
// the instant of the release.
func TestWaiterPromotedWithoutHeartbeat(t *testing.T) {
	inBubble(t, func(t *testing.T, srv *monolocktest.Server) {
		c := pipeClient(srv)
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
		queuedNow(t, srv, "x", 1)
		released := time.Now()
		if err := a.Release(); err != nil {
			t.Fatal(err)
		}
		b := <-got
		if b == nil {
			return
		}
		defer b.Release()
		if d := time.Since(released); d != 0 {
			t.Fatalf("promotion took %v; the heartbeat interval is 15s, the push is immediate", d)
		}
		if b.Token() <= a.Token() {
			t.Fatalf("waiter's token %d not above the first owner's %d", b.Token(), a.Token())
		}
	})
}

// silentProxy is a client's Dialer that forwards its connections to srv
// until silent is set; then it keeps both sides open and drops whatever
// arrives, like a network path that fails without a reset. Its
// connections are in memory, for a synctest bubble.
type silentProxy struct {
	srv    *monolocktest.Server
	silent atomic.Bool
}

func (p *silentProxy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	out, err := p.srv.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	client, in := net.Pipe()
	go p.pipe(out, in)
	go p.pipe(in, out)
	return client, nil
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

// A network that goes silent: the holder's fn is cancelled 0.8 × lease
// after its last answered heartbeat, 0.2 × lease before the server, one
// lease after hearing that heartbeat, grants the lock to the next client.
func TestSilentNetworkCancelsFnBeforeNextGrant(t *testing.T) {
	const lease = time.Second
	inBubble(t, func(t *testing.T, srv *monolocktest.Server) {
		proxy := &silentProxy{srv: srv}
		holder := monolock.New(monolock.Config{Address: srv.Addr, Dialer: proxy})
		direct := pipeClient(srv)

		var cancelledAt, grantedAt time.Time
		var cause error
		start := time.Now()
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
		queuedNow(t, srv, "guarded", 1)
		// Heartbeats every lease/4: the one at 250ms goes through, the
		// network goes silent at 300ms.
		time.Sleep(300 * time.Millisecond)
		proxy.silent.Store(true)
		lastHeard := start.Add(lease / 4)

		if err := <-holderDone; !errors.Is(err, monolock.ErrHeartbeatTimeout) {
			t.Fatalf("holder's Do = %v, want ErrHeartbeatTimeout joined in", err)
		}
		if err := <-waiterDone; err != nil {
			t.Fatalf("waiter's Do = %v", err)
		}
		if !errors.Is(cause, monolock.ErrHeartbeatTimeout) {
			t.Errorf("fn's ctx cause = %v, want ErrHeartbeatTimeout", cause)
		}
		if d := cancelledAt.Sub(lastHeard); d != lease*8/10 {
			t.Errorf("fn cancelled %v after the last heartbeat through, want 0.8 × lease (800ms)", d)
		}
		if d := grantedAt.Sub(lastHeard); d != lease {
			t.Errorf("waiter granted %v after the holder's last heartbeat reached the server, want the lease (1s)", d)
		}
		if !cancelledAt.Before(grantedAt) {
			t.Fatalf("holder learned of the loss at +%v, after the waiter was granted at +%v", cancelledAt.Sub(lastHeard), grantedAt.Sub(lastHeard))
		}
	})
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
			inBubble(t, func(t *testing.T, srv *monolocktest.Server) {
				c := pipeClient(srv)
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
				queuedNow(t, srv, "deploy", 1)
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
		})
	}
}

func TestForceReleaseIsLossWithServerError(t *testing.T) {
	inBubble(t, func(t *testing.T, srv *monolocktest.Server) {
		c := pipeClient(srv)
		l, err := c.Acquire(t.Context(), "x", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := srv.Server().ForceRelease("x")
		if err != nil || tok != l.Token() {
			t.Fatalf("ForceRelease = %d, %v; want %d", tok, err, l.Token())
		}
		synctest.Wait()
		select {
		case <-l.Done():
		default:
			t.Fatal("Done not closed at the force-release")
		}
		var se *monolock.ServerError
		if !errors.As(l.Err(), &se) || se.Code != protocol.CodeClosedByAdmin || !se.Temporary() || !errors.Is(l.Err(), protocol.ErrClosedByAdmin) {
			t.Fatalf("Err = %v, want *ServerError 0x02", l.Err())
		}
	})
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

// Short leases keep both sessions heartbeating every 100ms, and the release
// of each round falls on the instant both send one (200ms, 300ms) or
// between (250ms, 287ms, 324ms), so the promotion push crosses a heartbeat
// in flight; the promoted client must keep the lock for several leases
// without a false loss.
func TestPromotionAmidHeartbeats(t *testing.T) {
	inBubble(t, func(t *testing.T, srv *monolocktest.Server) {
		c := pipeClient(srv)
		const lease = 400 * time.Millisecond
		for i, queuedFor := range []time.Duration{200, 250, 287, 300, 324} {
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
			queuedNow(t, srv, "hot", 1)
			time.Sleep(queuedFor * time.Millisecond) // queued across heartbeats
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
	})
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
		// The header reads "goroutine N [runnable]:", in a bubble
		// "goroutine N [runnable, synctest bubble M]:".
		if len(lines) > 1 && (strings.HasSuffix(lines[0], "[runnable]:") || strings.Contains(lines[0], "[runnable, synctest bubble ")) &&
			(strings.HasPrefix(lines[1], "github.com/monolock/monolock-bench/monolock.(*Lock).read(") ||
				strings.HasPrefix(lines[1], "github.com/monolock/monolock-bench/monolock.(*Lock).start.func1(") ||
				strings.HasPrefix(lines[1], "github.com/monolock/monolock-bench/monolock.(*keeper).run(") ||
				strings.HasPrefix(lines[1], "runtime.goexit1(")) {
			continue // past wg.Done, returning (or already returned and exiting)
		}
		found = append(found, g)
	}
	return found
}

// No goroutine outlives its Lock: by the time Release (or a failed or
// cancelled Acquire) returns, the reader and the keeper have exited.
func TestNoGoroutineOutlivesLock(t *testing.T) {
	inBubble(t, func(t *testing.T, srv *monolocktest.Server) {
		c := pipeClient(srv)
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
		queuedNow(t, srv, "g", 1)
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
	})
}
