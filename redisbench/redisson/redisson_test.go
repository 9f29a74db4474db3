package redisson

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/internal/redissonlock"
)

// TestSeam runs the contender through the seam, as the runner drives it,
// on the Redis its spec describes: as a child process and in a container.
func TestSeam(t *testing.T) {
	c := Contender()
	t.Run("local", func(t *testing.T) {
		benchtest.Contender(t, c, benchtest.Start(t, c.Server), time.Second, 8, 10)
	})
	t.Run("containers", func(t *testing.T) {
		benchtest.Contender(t, c, benchtest.StartContainers(t, c.Server), time.Second, 8, 10)
	})
}

// TestScripts drives the scripts directly: a re-entry counts one more
// hold, another thread is told the remaining TTL, the unlock releases one
// hold at a time and publishes the unlock message only when the last goes.
func TestScripts(t *testing.T) {
	addr := benchtest.Start(t, redisbench.Server).Servers(redisbench.Server.Name)[0].Addr()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	const key, me, other, ttl = "scripts", "client:1", "client:2", 10000
	channel := redissonlock.Name(channelPrefix, key)
	sub := rc.Subscribe(ctx, channel)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the confirmation
		t.Fatal(err)
	}

	for i := range 2 {
		if err := acquireScript.Run(ctx, rc, []string{key}, ttl, me).Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("acquire %d by the holder: %v, want nil (granted)", i+1, err)
		}
	}
	if n, _ := rc.HGet(ctx, key, me).Int(); n != 2 {
		t.Fatalf("holds after a re-entry = %d, want 2", n)
	}
	left, err := acquireScript.Run(ctx, rc, []string{key}, ttl, other).Int64()
	if err != nil || left <= 0 || left > ttl {
		t.Fatalf("acquire by another thread = %d, %v; want the remaining TTL in (0, %d]", left, err, ttl)
	}
	unlock := func() (int64, error) {
		return unlockScript.Run(ctx, rc, []string{key, channel}, me, ttl, redissonlock.UnlockMessage).Int64()
	}
	if n, err := unlock(); err != nil || n != 0 {
		t.Fatalf("first unlock = %d, %v; want 0 (still held once)", n, err)
	}
	if n, err := unlockScript.Run(ctx, rc, []string{key, channel}, other, ttl, redissonlock.UnlockMessage).Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("unlock by another thread = %v, %v; want nil", n, err)
	}
	if m, err := sub.ReceiveTimeout(ctx, 100*time.Millisecond); err == nil {
		t.Fatalf("%v on %s while the lock is still held", m, channel)
	}
	if n, err := unlock(); err != nil || n != 1 {
		t.Fatalf("second unlock = %d, %v; want 1 (deleted)", n, err)
	}
	if n, _ := rc.Exists(ctx, key).Result(); n != 0 {
		t.Fatal("lock still exists after the last unlock")
	}
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil || msg.Payload != redissonlock.UnlockMessage {
		t.Fatalf("message on %s: %v, %v; want the unlock message %q", channel, msg, err, redissonlock.UnlockMessage)
	}
	if _, err := unlock(); !errors.Is(err, redis.Nil) {
		t.Fatalf("unlock of a free lock = %v, want nil", err)
	}
}

// TestContender checks what the row describes besides the lock: its
// settings name the wait strategy and the simplifications, its claims are
// about it and none says it is fair.
func TestContender(t *testing.T) {
	c := Contender()
	for _, k := range []string{"ttl", "wait", "watchdog_interval", "lost_after", "pool_size", "counters", "simplified", "fair"} {
		if c.Settings[k] == "" {
			t.Errorf("setting %q missing", k)
		}
	}
	ids := map[string]bool{}
	for _, r := range c.Claims {
		if r.Subject != Name || ids[r.ID] {
			t.Errorf("claim %s: subject %q (want %q), id repeated %v", r.ID, r.Subject, Name, ids[r.ID])
		}
		// The report's claims table shows the claim without its subject.
		if !strings.Contains(r.Claim, Subject) {
			t.Errorf("claim %s: %q does not name the lock (%q)", r.ID, r.Claim, Subject)
		}
		ids[r.ID] = true
		if r.Metric == "fifo_inversions_per_1k" {
			t.Errorf("claim %s: the lock is not fair", r.ID)
		}
	}
}
