package postgres

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/benchtest"
)

func TestKeyID(t *testing.T) {
	// SHA-256("a") = ca978112ca1bbdca...: the first 8 bytes, big-endian,
	// as int64 (negative: the top bit is set).
	if got, want := KeyID("a"), int64(-0x3568_7eed_35e4_4236); got != want {
		t.Errorf("KeyID(a) = %#x, want %#x", got, want)
	}
	if KeyID("monolock-bench:x") == KeyID("monolock-bench:y") {
		t.Error("two names, one key")
	}
}

func TestServerArgs(t *testing.T) {
	got := strings.Join(ContainerCmd(TunedKeepalives...), " ")
	want := "-D /var/lib/postgresql/data -c listen_addresses=* -c port=5432 -c tcp_keepalives_idle=1 -c tcp_keepalives_interval=1 -c tcp_keepalives_count=3 -c tcp_user_timeout=3000"
	if got != want {
		t.Errorf("ContainerCmd = %q, want %q", got, want)
	}
	if got := ConnString("127.0.0.1:5433"); got != "host=127.0.0.1 port=5433 user=postgres dbname=postgres sslmode=disable" {
		t.Errorf("ConnString = %q", got)
	}
}

// startLocal starts a local server for the test; without PostgreSQL
// installed the test is skipped, unless CI is set.
func startLocal(t *testing.T, args ...string) *LocalServer {
	t.Helper()
	if testing.Short() {
		t.Skip("initdb and a PostgreSQL server: not under -short (make test runs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := StartLocal(ctx, args...)
	if errors.Is(err, ErrNoServer) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func newLocker(t *testing.T, cfg Config) *Locker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func newProbe(t *testing.T, addr string) *Probe {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := NewProbe(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func TestLocal(t *testing.T) {
	s := startLocal(t)
	if os.Geteuid() == 0 && s.RunAs == "" {
		t.Error("running as root but the server was not started as another user")
	}
	t.Logf("PostgreSQL %s as %q at %s", s.Install.Version, s.RunAs, s.Addr())
	probe := newProbe(t, s.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("settings", func(t *testing.T) {
		set, err := probe.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range RecordedSettings {
			if set["server."+name] == "" {
				t.Errorf("no value for %s", name)
			}
		}
		// Over TCP, the OS defaults show: Linux starts probes after 2h.
		if got := set["server.tcp_keepalives_idle"]; got != "7200" {
			t.Logf("tcp_keepalives_idle %s (the Linux default is 7200)", got)
		}
		if got := set["server.idle_session_timeout"]; got != "0" {
			t.Errorf("idle_session_timeout %q, want PostgreSQL's default 0", got)
		}
	})

	// Lockers opened side by side (a workload's clients) all create the
	// token sequence at once: the losers of that race open too.
	t.Run("concurrent opens", func(t *testing.T) {
		if _, err := probe.conn.Exec(ctx, "DROP SEQUENCE IF EXISTS "+FenceSequence); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 16)
		for range 16 {
			go func() {
				l, err := New(ctx, Config{Addr: s.Addr(), Lease: time.Second, Fence: true})
				if err == nil {
					l.Close()
				}
				errs <- err
			}()
		}
		for range 16 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("exclusion", func(t *testing.T) {
		l := newLocker(t, Config{Addr: s.Addr(), Lease: time.Second})
		before, err := probe.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		benchtest.MutualExclusion(t, l, "exclusion", 4, 15, 2*time.Minute)
		// 60 claims: a lock and an unlock each. Closing the pool ends the
		// backends, which report their statistics as they exit.
		start := time.Now()
		l.Close()
		deadline := start.Add(30 * time.Second)
		for {
			after, err := probe.Counts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			d := after.Transactions - before.Transactions
			if d >= 120 {
				t.Logf("%d transactions for 60 acquisitions, seen %v after the pool closed", d, time.Since(start).Round(time.Millisecond))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d transactions for 60 acquisitions, want at least 120", d)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("fenced exclusion", func(t *testing.T) {
		l := newLocker(t, Config{Addr: s.Addr(), Lease: time.Second, Fence: true})
		h, err := l.Acquire(ctx, "fenced")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := h.Token(); !ok {
			t.Error("fenced grant without a token")
		}
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
		benchtest.MutualExclusion(t, l, "fenced", 4, 15, 2*time.Minute)
	})

	t.Run("no token without fence", func(t *testing.T) {
		l := newLocker(t, Config{Addr: s.Addr(), Lease: time.Second})
		h, err := l.Acquire(ctx, "plain")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release(ctx)
		if _, ok := h.Token(); ok {
			t.Error("a token without Fence")
		}
	})

	t.Run("waiter granted on release; cancelled wait withdrawn", func(t *testing.T) {
		l := newLocker(t, Config{Addr: s.Addr(), Lease: time.Second})
		h1, err := l.Acquire(ctx, "handover")
		if err != nil {
			t.Fatal(err)
		}
		// A waiter whose ctx expires gives up and leaves no request.
		wctx, wcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err = l.Acquire(wctx, "handover")
		wcancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire with an expiring ctx: %v, want DeadlineExceeded", err)
		}
		granted := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			h2, err := l.Acquire(ctx, "handover")
			if err != nil {
				t.Error(err)
				return
			}
			close(granted)
			h2.Release(ctx)
		})
		waitFor(t, "one waiter in pg_locks", func() bool {
			n, err := probe.Waiters(ctx)
			return err == nil && n == 1
		})
		select {
		case <-granted:
			t.Fatal("second acquisition granted while the first is held")
		default:
		}
		if err := h1.Release(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-granted:
		case <-ctx.Done():
			t.Fatal("waiter not granted after release")
		}
		wg.Wait()
	})

	t.Run("lost when the session is terminated", func(t *testing.T) {
		l := newLocker(t, Config{Addr: s.Addr(), Lease: time.Second})
		h, err := l.Acquire(ctx, "lost")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release(ctx)
		pid := h.(*held).conn.Conn().PgConn().PID()
		var ok bool
		if err := probe.conn.QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
			t.Fatalf("pg_terminate_backend: %v %v", ok, err)
		}
		select {
		case <-h.Lost():
		case <-time.After(30 * time.Second):
			t.Fatal("Lost not closed after the session was terminated")
		}
		// The server freed the lock with the session.
		h2, err := l.Acquire(ctx, "lost")
		if err != nil {
			t.Fatal(err)
		}
		h2.Release(ctx)
	})
}

func TestLocalTunedKeepalives(t *testing.T) {
	s := startLocal(t, ServerArgs(TunedKeepalives...)...)
	probe := newProbe(t, s.Addr())
	set, err := probe.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"server.tcp_keepalives_idle":     "1",
		"server.tcp_keepalives_interval": "1",
		"server.tcp_keepalives_count":    "3",
		"server.tcp_user_timeout":        "3000",
	} {
		if set[k] != want {
			t.Errorf("%s = %q, want %q", k, set[k], want)
		}
	}
}

// waitFor polls cond every 20ms for up to 30s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
