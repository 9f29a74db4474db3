package monolock

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers"
	"github.com/monolock/monolock-bench/bench/backend/local"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// TestWatchLock: on a deployment started to record, on both backends
// that can, the watcher reports from the server's audit log a holder's
// grant, its graceful release and the waiter's grant in that order with
// the clients' tokens; a silent holder's expiry with the reason expired;
// a break when the server is killed and a new start once it runs again,
// after which a grant is reported again. A deployment that does not
// record reports nothing.
func TestWatchLock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts monolock servers: not under -short (make test runs it)")
	}
	specs := []*bench.ServerSpec{Server}
	t.Run("local", func(t *testing.T) {
		d, err := local.StartOn(t.Context(), specs, nil, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		checkWatch(t, d.Servers(Server.Name))
	})
	t.Run("containers", func(t *testing.T) {
		benchtest.RequireDocker(t)
		d, err := containers.StartOn(t.Context(), specs, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		checkWatch(t, d.Servers(Server.Name))
	})
	t.Run("not recording", func(t *testing.T) {
		servers := benchtest.Start(t, Server).Servers(Server.Name)
		done := make(chan struct{})
		var reports []bench.LockChange
		go func() {
			defer close(done)
			WatchLock(t.Context(), servers, "k", func(c bench.LockChange) { reports = append(reports, c) })
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the watch of a server that does not record did not return")
		}
		if len(reports) > 0 {
			t.Errorf("a server that does not record: reported %+v", reports)
		}
	})
}

func checkWatch(t *testing.T, servers []bench.Server) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const key = "watched"
	next, _ := benchtest.WatchLock(t, ctx, WatchLock, servers, key)
	next(bench.WatchStarted)

	l := New(monolock.Config{Address: servers[0].Addr()}, 2*time.Second)
	defer l.Close()
	a, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := a.Token()
	granted := func(want uint64) {
		t.Helper()
		g := next(bench.LockGranted)
		if g.Token == nil || *g.Token != want || g.Key != key || g.At.IsZero() {
			t.Fatalf("grant %+v, want token %d of %q with its time", g, want, key)
		}
	}
	ended := func(cause string) {
		t.Helper()
		if e := next(bench.LockEnded); e.Cause != cause {
			t.Fatalf("end %+v, want cause %q", e, cause)
		}
	}
	granted(first)
	waiter := make(chan bench.Held, 1)
	go func() {
		h, err := l.Acquire(ctx, key)
		if err != nil {
			t.Error(err)
		}
		waiter <- h
	}()
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	ended("graceful")
	b := <-waiter
	if b == nil {
		t.FailNow()
	}
	second, _ := b.Token()
	granted(second)
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	ended("graceful")

	// A holder that falls silent: the server ends its hold after a lease.
	conn, err := net.Dial("tcp", servers[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(protocol.AppendAcquire(nil, 300, key)); err != nil {
		t.Fatal(err)
	}
	f, err := protocol.ReadServerFrame(conn)
	if err != nil || f.Type != protocol.TypeAcquired {
		t.Fatalf("silent holder's acquire: %+v, %v", f, err)
	}
	granted(f.Token)
	ended("expired")

	if err := servers[0].Kill(ctx); err != nil {
		t.Fatal(err)
	}
	next(bench.WatchBroken)
	if err := servers[0].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	next(bench.WatchStarted)
	c, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	third, _ := c.Token()
	granted(third)
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAuditChange: audit lines of the watched lock become changes with
// the server's time, token and reason; other locks and events are left
// out; a line that is no audit record is an error (a hole in the record).
func TestAuditChange(t *testing.T) {
	for _, c := range []struct {
		line       string
		kind       bench.LockChangeKind
		token      uint64
		cause      string
		ok, broken bool
	}{
		{line: `{"time":"2026-12-07T22:00:00.000000001Z","event":"granted","lock":"k","identity":"","remote_addr":"127.0.0.1:5","token":7,"wait_ms":0}`, kind: bench.LockGranted, token: 7, ok: true},
		{line: `{"time":"2026-12-07T22:00:01.000000001Z","event":"released","lock":"k","identity":"","remote_addr":"127.0.0.1:5","token":7,"held_ms":1000,"reason":"expired"}`, kind: bench.LockEnded, token: 7, cause: "expired", ok: true},
		{line: `{"time":"2026-12-07T22:00:01.000000001Z","event":"granted","lock":"other","identity":"","remote_addr":"127.0.0.1:5","token":8,"wait_ms":0}`},
		{line: `{"time":"2026-12-07T22:00:01.000000001Z","event":"kick_waiter","lock":"k","identity":"","remote_addr":"127.0.0.1:5"}`},
		{line: `level=INFO msg=started`, broken: true},
		{line: `{"time":"yesterday","event":"granted","lock":"k","token":9}`, broken: true},
	} {
		got, ok, err := auditChange("monolock", "k", []byte(c.line))
		if (err != nil) != c.broken || ok != c.ok {
			t.Errorf("%s: ok %v, err %v", c.line, ok, err)
			continue
		}
		if !ok {
			continue
		}
		if got.Kind != c.kind || got.Token == nil || *got.Token != c.token || got.Cause != c.cause || got.Key != "k" || got.Server != "monolock" || got.At.IsZero() {
			t.Errorf("%s: %+v", c.line, got)
		}
	}
}
