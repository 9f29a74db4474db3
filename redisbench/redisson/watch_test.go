package redisson

import (
	"context"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestWatchLockSeesTheHash: the contender's watcher follows the lock's
// hash on a real Redis: Redisson's grant (hincrby on an absent hash) and
// its release (del), with the TTL read back at the grant.
func TestWatchLockSeesTheHash(t *testing.T) {
	c := Contender()
	servers := benchtest.Start(t, c.Server).Servers(c.Server.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const key = "watched"

	next, _ := benchtest.WatchLock(t, ctx, c.WatchLock, servers, key)
	next(bench.WatchStarted)
	l, err := c.Open(ctx, bench.Addrs(servers), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if g := next(bench.LockGranted); g.Key != DefaultKeyPrefix+key || g.TTL == nil {
		t.Errorf("after the acquire %+v, want a grant of %s with its TTL", g, DefaultKeyPrefix+key)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if e := next(bench.LockEnded); e.Cause != "del" {
		t.Errorf("after the release %+v, want an end by del", e)
	}
}
