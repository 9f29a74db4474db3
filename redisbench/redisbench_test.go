package redisbench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/local"
)

func TestMutualExclusion(t *testing.T) {
	single := benchtest.StartRedis(t).Addr
	var masters []string
	for range 5 {
		masters = append(masters, benchtest.StartRedis(t).Addr)
	}
	tests := []struct {
		name   string
		open   func() (bench.Locker, error)
		cycles int
	}{
		{"redis/jitter", func() (bench.Locker, error) { return NewRedis(Config{Addr: single, TTL: 10 * time.Second}) }, 3},
		{"redis/spin", func() (bench.Locker, error) {
			return NewRedis(Config{Addr: single, TTL: 10 * time.Second, Wait: SpinWait})
		}, 20},
		{"redlock/jitter", func() (bench.Locker, error) {
			return NewRedlock(RedlockConfig{Addrs: masters, TTL: 10 * time.Second})
		}, 3},
		{"redlock/spin", func() (bench.Locker, error) {
			return NewRedlock(RedlockConfig{Addrs: masters, TTL: 10 * time.Second, Wait: SpinWait})
		}, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := tt.open()
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			benchtest.MutualExclusion(t, l, "exclusion-"+tt.name, 16, tt.cycles, 2*time.Minute)
		})
	}
}

func TestRedisWatchdog(t *testing.T) {
	addr := benchtest.StartRedis(t).Addr
	const ttl = 300 * time.Millisecond
	l, err := NewRedis(Config{Addr: addr, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	probe := redis.NewClient(&redis.Options{Addr: addr})
	defer probe.Close()
	ctx := context.Background()

	h, err := l.Acquire(ctx, "wd")
	if err != nil {
		t.Fatal(err)
	}
	held := h.(*redisHeld)
	time.Sleep(4 * ttl) // well past the TTL: only the watchdog keeps the key
	if v, err := probe.Get(ctx, held.key).Result(); err != nil || v != held.value {
		t.Fatalf("after 4×TTL: GET = %q, %v; want our value (watchdog should extend)", v, err)
	}
	select {
	case <-h.Lost():
		t.Fatal("Lost closed while the watchdog kept the lock")
	default:
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := probe.Exists(ctx, held.key).Result(); n != 0 {
		t.Fatal("key still exists after Release")
	}
	// Put the same value back with a short TTL: a watchdog still running
	// would keep extending it.
	if err := probe.Set(ctx, held.key, held.value, ttl).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * ttl)
	if n, _ := probe.Exists(ctx, held.key).Result(); n != 0 {
		t.Fatal("key was extended after Release: the watchdog did not stop")
	}

	// A key taken away is noticed by the watchdog at its next tick.
	h, err = l.Acquire(ctx, "wd2")
	if err != nil {
		t.Fatal(err)
	}
	if err := probe.Del(ctx, h.(*redisHeld).key).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Lost():
	case <-time.After(10 * ttl):
		t.Fatal("Lost not closed after the key was deleted")
	}
	if err := h.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Release after loss = %v, want ErrNotHeld", err)
	}
}

func TestRedlockQuorum(t *testing.T) {
	var masters []string
	var kill []func()
	for range 5 {
		p := benchtest.StartRedis(t)
		masters = append(masters, p.Addr)
		kill = append(kill, p.Kill)
	}
	l, err := NewRedlock(RedlockConfig{Addrs: masters, TTL: 2 * time.Second, Wait: SpinWait, Tries: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	kill[0]()
	h, err := l.Acquire(ctx, "quorum")
	if err != nil {
		t.Fatalf("one master down: %v, want a grant (quorum 3 of 5)", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("release with one master down: %v", err)
	}

	kill[1]()
	kill[2]()
	_, err = l.Acquire(ctx, "quorum")
	if !errors.Is(err, bench.ErrGaveUp) {
		t.Fatalf("three masters down: %v, want an error wrapping bench.ErrGaveUp", err)
	}
}

func TestRedisWaitsUntilCancelled(t *testing.T) {
	addr := benchtest.StartRedis(t).Addr
	l, err := NewRedis(Config{Addr: addr, TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, err := l.Acquire(context.Background(), "busy")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	if _, err := l.Acquire(ctx, "busy"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on a held key = %v, want context.DeadlineExceeded", err)
	}
}

func TestFloor(t *testing.T) {
	addr := benchtest.StartRedis(t).Addr
	f := NewFloor(addr, 0)
	defer f.Close()
	ctx := context.Background()
	for range 3 {
		h, err := f.Acquire(ctx, "any")
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	v, err := ServerVersion(ctx, addr)
	if err != nil || v == "" {
		t.Fatalf("ServerVersion = %q, %v", v, err)
	}
	free, err := local.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	dead := NewFloor(free, 0)
	defer dead.Close()
	if _, err := dead.Acquire(ctx, "any"); err == nil {
		t.Fatal("Acquire on a dead address succeeded")
	}
}
