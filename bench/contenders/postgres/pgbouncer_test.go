package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestPgBouncer runs both PgBouncer rows on the pair as a local process
// group and in a container: the transaction-level lock through the seam's
// mutual-exclusion check (it must hold), the session-level lock through
// an observation of the pitfall, which is the finding, not a failure.
func TestPgBouncer(t *testing.T) {
	if testing.Short() {
		t.Skip("initdb, PostgreSQL and PgBouncer: not under -short (make test runs it)")
	}
	for _, c := range []struct {
		name  string
		start func(t *testing.T) bench.Deployment
	}{
		{"local", func(t *testing.T) bench.Deployment { return benchtest.Start(t, PgBouncerServer) }},
		{"containers", func(t *testing.T) bench.Deployment { return benchtest.StartContainers(t, PgBouncerServer) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := c.start(t)
			addr := d.Servers(PgBouncerServer.Name)[0].Addr()
			t.Run("xact", func(t *testing.T) {
				// More workers than server connections: they queue in
				// PgBouncer as well as on the lock.
				benchtest.Contender(t, PgBouncerXactContender(), d, time.Second, PgBouncerPoolSize+2, 10)
				if n := advisoryLocks(t, addr); n != 0 {
					t.Errorf("%d advisory locks held after every xact claim was released, want 0", n)
				}
			})
			t.Run("session-pitfall", func(t *testing.T) { observePitfall(t, addr) })
			t.Run("token after the transaction ended", func(t *testing.T) { tokenNeedsHeldTransaction(t, addr) })
			t.Run("killed", func(t *testing.T) { killAndRestart(t, d.Servers(PgBouncerServer.Name)[0]) })
		})
	}
}

// killAndRestart kills the pair (SIGKILL, as the chaos nemesis does) and
// restarts it, a few times: each time PostgreSQL must come back behind
// PgBouncer, and a fenced xact claim must get a higher token than the
// one held when the pair was killed. A killed container leaves a stale
// postmaster.pid whose PID may be taken by one of PgBouncer's threads in
// the next start; PostgreSQL then refused to start, and PgBouncer said
// "server down" (the soak 20261207T140711Z). Which PID the file names
// varies from start to start, so the test restarts more than once. A
// token drawn inside the held transaction was not yet in the WAL at the
// kill and came back after crash recovery (the soak 20261207T164238Z).
func killAndRestart(t *testing.T, s bench.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var last uint64
	for i := range 4 {
		tok, release := holdXactToken(t, s.Addr())
		if tok <= last {
			t.Errorf("restart %d: token %d after a kill, not above %d held at the kill", i, tok, last)
		}
		last = tok
		if err := s.Kill(ctx); err != nil {
			t.Fatal(err)
		}
		release()
		if err := s.Restart(ctx); err != nil {
			t.Fatalf("restart %d after a kill: %v", i+1, err)
		}
		if n := advisoryLocks(t, s.Addr()); n != 0 {
			t.Errorf("restart %d: %d advisory locks held, want 0", i+1, n)
		}
	}
	tok, release := holdXactToken(t, s.Addr())
	release()
	if tok <= last {
		t.Errorf("token %d after the last kill, not above %d held at the kill", tok, last)
	}
}

// holdXactToken takes a fenced xact claim as the postgres-pgbouncer-xact
// row does and returns its token and a func that releases it (the error
// of a release after a kill is expected).
func holdXactToken(t *testing.T, addr string) (uint64, func()) {
	t.Helper()
	l := openLocker(t, Config{Addr: addr, Lease: quietLease, Fence: true, Xact: true, SimpleProtocol: true, FenceDatabase: PgBouncerFenceDatabase})
	h, err := l.Acquire(t.Context(), "kill-token")
	if err != nil {
		t.Fatal(err)
	}
	tok, ok := h.Token()
	if !ok {
		t.Fatal("a fenced xact claim without a token")
	}
	return tok, func() { h.Release(context.Background()) }
}

// tokenNeedsHeldTransaction: a fenced xact claim's token is handed out
// only while the held transaction still answers after the draw. With its
// server backend terminated between the grant and the draw (as when its
// client is cut off and the server lets the next holder in), the draw
// fails rather than hand a token to a holder that no longer holds the
// lock; with the transaction alive it gives a token.
func tokenNeedsHeldTransaction(t *testing.T, addr string) {
	ctx := t.Context()
	l := openLocker(t, Config{Addr: addr, Lease: quietLease, Fence: true, Xact: true, SimpleProtocol: true, FenceDatabase: PgBouncerFenceDatabase})
	for _, end := range []bool{false, true} {
		conn, err := l.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pid int32
		if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, "SELECT pg_backend_pid() FROM (SELECT pg_advisory_xact_lock($1)) AS locked", KeyID("ended")).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if end {
			p, err := dialProbe(ctx, addr, true)
			if err != nil {
				t.Fatal(err)
			}
			var done bool
			err = p.conn.QueryRow(ctx, "SELECT pg_terminate_backend($1, 5000)", pid).Scan(&done)
			p.Close(context.Background())
			if err != nil || !done {
				t.Fatalf("terminating the holder's backend %d: %v, %v", pid, done, err)
			}
		}
		tok, err := l.xactToken(ctx, conn)
		switch {
		case end && err == nil:
			t.Errorf("token %d handed out for a transaction the server had ended", tok)
		case !end && (err != nil || tok == 0):
			t.Errorf("a live transaction's token: %d, %v", tok, err)
		}
		conn.Conn().Close(context.Background())
		conn.Release()
	}
}

// pitfallConfig is the session-level lock through PgBouncer, unfenced,
// its watchdog pinging every lease/3.
func pitfallConfig(addr string, lease time.Duration) Config {
	return Config{Addr: addr, Lease: lease, SimpleProtocol: true}
}

// quietLease paces the watchdog of the deterministic sequences: no ping
// (which takes an idle server connection and puts it back) runs between
// their steps, so PgBouncer's LIFO choice is the one the steps make.
const quietLease = 10 * time.Minute

// advisoryLocks counts the granted advisory locks on the server behind
// addr (read through PgBouncer: every server connection sees pg_locks).
func advisoryLocks(t *testing.T, addr string) int64 {
	t.Helper()
	p, err := dialProbe(t.Context(), addr, true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	var n int64
	if err := p.conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// heldFor polls the granted advisory locks on key's id for up to window
// and returns how long the lock was still seen held (window when it never
// went) and whether it went.
func heldFor(t *testing.T, addr, key string, window time.Duration) (time.Duration, bool) {
	t.Helper()
	p, err := dialProbe(t.Context(), addr, true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	start := time.Now()
	for {
		held, err := p.Held(t.Context(), DefaultKeyPrefix, []string{key})
		if err != nil {
			t.Fatal(err)
		}
		if len(held) == 0 {
			return time.Since(start), true
		}
		if time.Since(start) >= window {
			return time.Since(start), false
		}
		time.Sleep(100 * time.Millisecond) // a polling interval, not a synchronisation
	}
}

func openLocker(t *testing.T, cfg Config) *Locker {
	t.Helper()
	l, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// observePitfall shows what the session-level lock does through
// PgBouncer's transaction pooling. Two sequences are deterministic, given
// PgBouncer's documented LIFO reuse of idle server connections
// (server_round_robin = 0) and nothing else running: a second client's
// pg_advisory_lock lands on the holder's server connection and is granted
// at once (two holders), and an unlock that PgBouncer sends to another
// server connection (the holder's is pinned by a third client's
// transaction) returns false and leaves the lock held by an idle server
// connection after every client has gone. Those are asserted. Then the
// seam's workload runs with more workers than server connections and
// what it sees is logged: the finding, not a harness failure.
func observePitfall(t *testing.T, addr string) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	// Two holders.
	a, b := openLocker(t, pitfallConfig(addr, quietLease)), openLocker(t, pitfallConfig(addr, quietLease))
	ha, err := a.Acquire(ctx, "pitfall-double")
	if err != nil {
		t.Fatal(err)
	}
	bctx, bcancel := context.WithTimeout(ctx, 30*time.Second)
	hb, err := b.Acquire(bctx, "pitfall-double")
	bcancel()
	if err != nil {
		t.Errorf("second client's pg_advisory_lock while the first holds it: %v; want it granted on the holder's server connection (the pitfall)", err)
	} else {
		t.Logf("pitfall: a second client was granted pg_advisory_lock while the first held it (one server connection, re-entrant lock)")
	}
	if err := ha.Release(ctx); err != nil {
		t.Errorf("first holder's release: %v", err)
	}
	if hb != nil {
		if err := hb.Release(ctx); err != nil {
			t.Errorf("second holder's release: %v", err)
		}
	}

	// A stranded lock.
	c := openLocker(t, pitfallConfig(addr, quietLease))
	hc, err := a.Acquire(ctx, "pitfall-stranded")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil { // pins the holder's server connection
		t.Fatal(err)
	}
	relErr := hc.Release(ctx)
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	conn.Release()
	if !errors.Is(relErr, ErrNotHeld) {
		t.Errorf("release while the holder's server connection is pinned: %v, want %v (the unlock ran on another server connection)", relErr, ErrNotHeld)
	}
	a.Close()
	b.Close()
	c.Close()
	const window = 5 * time.Second
	d, gone := heldFor(t, addr, "pitfall-stranded", window)
	if gone {
		t.Errorf("stranded lock went %v after every client closed; want it held by PgBouncer's idle server connection (server_idle_timeout 600s)", d.Round(time.Millisecond))
	} else {
		t.Logf("pitfall: pg_advisory_unlock returned false (ran on another server connection); the lock was still held %v after its holder released and every client closed (PgBouncer keeps the server connection up to server_idle_timeout, 600s)", d.Round(time.Millisecond))
	}

	// The seam's workload: more workers than server connections.
	workers, cycles := PgBouncerPoolSize+2, 10
	l := openLocker(t, pitfallConfig(addr, time.Second))
	var (
		inside, maxInside, overlaps, grants, notHeld, timeouts, otherErrs atomic.Int64
		wg                                                                sync.WaitGroup
	)
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	for range workers {
		wg.Go(func() {
			for range cycles {
				actx, acancel := context.WithTimeout(wctx, 3*time.Second)
				h, err := l.Acquire(actx, "pitfall-seam")
				acancel()
				switch {
				case errors.Is(err, context.DeadlineExceeded):
					timeouts.Add(1)
					continue
				case err != nil:
					otherErrs.Add(1)
					t.Logf("acquire: %v", err)
					return
				}
				grants.Add(1)
				n := inside.Add(1)
				if n > 1 {
					overlaps.Add(1)
				}
				for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
				}
				time.Sleep(time.Millisecond) // the critical section's work
				inside.Add(-1)
				switch err := h.Release(context.WithoutCancel(wctx)); {
				case errors.Is(err, ErrNotHeld):
					notHeld.Add(1)
				case err != nil:
					otherErrs.Add(1)
					t.Logf("release: %v", err)
				}
			}
		})
	}
	wg.Wait()
	l.Close()
	d, gone = heldFor(t, addr, "pitfall-seam", window)
	stranded := "none"
	if !gone {
		stranded = "still held " + d.Round(time.Millisecond).String() + " after every client closed"
	} else if d > 0 {
		stranded = "gone " + d.Round(time.Millisecond).String() + " after every client closed"
	}
	t.Logf("pitfall through the seam (%d workers × %d cycles, %d server connections): %d grants, %d overlapping grants (at most %d holders at once), %d releases whose unlock found the lock not held, %d acquires not granted within 3s, %d other errors; stranded lock: %s",
		workers, cycles, PgBouncerPoolSize, grants.Load(), overlaps.Load(), maxInside.Load(), notHeld.Load(), timeouts.Load(), otherErrs.Load(), stranded)
	if otherErrs.Load() > 0 {
		t.Errorf("%d errors other than the pitfall's", otherErrs.Load())
	}
	if grants.Load() == 0 {
		t.Errorf("no grant through the seam")
	}
}
