package etcd

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestWatchLockRecordsExpiry: on a real cluster, a holder whose client
// dies without releasing (its lease runs out, 1s TTL) and a waiter that
// is granted after it show in the watcher's record as the first grant
// (with the holder's token), its end, then the second grant with the
// waiter's token, in revision order.
func TestWatchLockRecordsExpiry(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd cluster")
	}
	d := benchtest.Start(t, Server)
	servers := d.Servers(Server.Name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const key = "watched"

	next, stop := benchtest.WatchLock(t, ctx, WatchLock, servers, key)
	next(bench.WatchStarted)

	// The first holder: a session whose client is closed without revoking
	// its lease, so the server expires it.
	dying, err := clientv3.New(clientv3.Config{Endpoints: bench.Addrs(servers), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := concurrency.NewSession(dying, concurrency.WithTTL(1))
	if err != nil {
		t.Fatal(err)
	}
	m := concurrency.NewMutex(s, DefaultKeyPrefix+key)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	owner := m.IsOwner()
	first := uint64(owner.GetCompare().GetCreateRevision())
	g1 := next(bench.LockGranted)
	if g1.Token == nil || *g1.Token != first {
		t.Fatalf("first grant %+v, want token %d", g1, first)
	}
	dying.Close()

	l := newLocker(t, bench.Addrs(servers), time.Second)
	h, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(context.Background())
	second, _ := h.Token()
	end := next(bench.LockEnded)
	g2 := next(bench.LockGranted)
	if end.Key != g1.Key || *end.Token != first || end.Revision <= g1.Revision {
		t.Errorf("end %+v does not end the first grant %+v", end, g1)
	}
	if g2.Token == nil || *g2.Token != second || g2.Revision < end.Revision || g2.Key == g1.Key {
		t.Errorf("second grant %+v, want token %d after the end at revision %d", g2, second, end.Revision)
	}
	// The watcher ends when its context does, not at the test's deadline.
	stop()
	if ctx.Err() != nil {
		t.Error("the watcher outlived its context until the test's deadline")
	}
}
