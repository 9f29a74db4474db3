package zookeeper

import (
	"context"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestWatchLockRecordsHandover: on a local ensemble, a holder's grant,
// its release and the waiter's grant show in the watcher's record in
// that order, the grants with the clients' tokens (czxids).
func TestWatchLockRecordsHandover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble: not under -short (make test runs it)")
	}
	servers := benchtest.Start(t, Server).Servers(Server.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const key = "watched"

	next, stop := benchtest.WatchLock(t, ctx, WatchLock, servers, key)
	next(bench.WatchStarted)

	l, err := New(Config{Servers: bench.Addrs(servers), Lease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := a.Token()
	g1 := next(bench.LockGranted)
	if g1.Token == nil || *g1.Token != first {
		t.Fatalf("first grant %+v, want token %d", g1, first)
	}
	granted := make(chan bench.Held, 1)
	go func() {
		h, err := l.Acquire(ctx, key)
		if err != nil {
			t.Error(err)
			close(granted)
			return
		}
		granted <- h
	}()
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	b, ok := <-granted
	if !ok {
		return
	}
	defer b.Release(context.Background())
	second, _ := b.Token()
	end := next(bench.LockEnded)
	if end.Key != g1.Key || end.Token == nil || *end.Token != first {
		t.Errorf("end %+v does not end the first grant %+v", end, g1)
	}
	if g2 := next(bench.LockGranted); g2.Token == nil || *g2.Token != second {
		t.Errorf("second grant %+v, want token %d", g2, second)
	}
	// The watcher ends when its context does, not at the test's deadline.
	stop()
	if ctx.Err() != nil {
		t.Error("the watcher outlived its context until the test's deadline")
	}
}
