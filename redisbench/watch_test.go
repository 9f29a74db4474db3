package redisbench

import (
	"context"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestLockWatchRecordsExpiry: on a real Redis, a holder that stops
// renewing (a bare SET NX PX 300) and the redis contender's grant after
// it show in the watcher's record as a grant with its TTL read back, an
// expiry, the next grant, and its release as a del, in that order.
func TestLockWatchRecordsExpiry(t *testing.T) {
	s := benchtest.Start(t, Server).Servers(Server.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const key = "watched"

	next, stop := benchtest.WatchLock(t, ctx, LockWatch(DefaultKeyPrefix), s, key)
	next(bench.WatchStarted)

	raw := NewClientDialer(s[0].Addr(), 1, Timeouts{}, nil)
	defer raw.Close()
	if ok, err := raw.SetNX(ctx, DefaultKeyPrefix+key, "dying", 300*time.Millisecond).Result(); err != nil || !ok {
		t.Fatalf("SET NX: %v %v", ok, err)
	}
	g1 := next(bench.LockGranted)
	if g1.Key != DefaultKeyPrefix+key || g1.TTL == nil || *g1.TTL <= 0 || *g1.TTL > 300*time.Millisecond {
		t.Fatalf("first grant %+v, want the key with a TTL of at most 300ms", g1)
	}

	r, err := NewRedis(Config{Addr: s[0].Addr(), TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h, err := r.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if end := next(bench.LockEnded); end.Cause != "expired" {
		t.Errorf("end %+v, want an expiry", end)
	}
	if g2 := next(bench.LockGranted); g2.TTL == nil || *g2.TTL <= 300*time.Millisecond {
		t.Errorf("second grant %+v, want the contender's 1s TTL read back", g2)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if end := next(bench.LockEnded); end.Cause != "del" {
		t.Errorf("end %+v, want the release's del", end)
	}
	// The watcher ends when its context does, not at the test's deadline.
	stop()
	if ctx.Err() != nil {
		t.Error("the watcher outlived its context until the test's deadline")
	}
}
