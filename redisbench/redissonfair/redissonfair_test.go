package redissonfair

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/faults/faultproxy"
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

// fixture is one Redis, a client to look at the queue, and Lockers on it.
type fixture struct {
	addr  string
	probe *redis.Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{addr: benchtest.Start(t, redisbench.Server).Servers(redisbench.Server.Name)[0].Addr()}
	f.probe = redis.NewClient(&redis.Options{Addr: f.addr})
	t.Cleanup(func() { f.probe.Close() })
	return f
}

// locker opens a Locker on addr (the fixture's Redis unless a proxy's).
func (f *fixture) locker(t *testing.T, addr string, ttl, wait time.Duration) *Locker {
	t.Helper()
	l, err := New(Config{Config: redissonlock.Config{Addr: addr, TTL: ttl}, WaitTimeout: wait})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func queueName(key string) string {
	return redissonlock.Name(queuePrefix, DefaultKeyPrefix+key)
}

// awaitQueue waits until the queue of key holds n threads.
func (f *fixture) awaitQueue(t *testing.T, key string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := f.probe.LLen(context.Background(), queueName(key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue of %s has %d threads after 10s, want %d", key, got, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestGrantsInRequestOrder queues waiters one after another behind a
// holder, each seen in the queue before the next asks, and checks that
// they are granted in that order.
func TestGrantsInRequestOrder(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const key, waiters = "order", 8
	h, err := f.locker(t, f.addr, 5*time.Second, 0).Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := range waiters {
		l := f.locker(t, f.addr, 5*time.Second, 0)
		wg.Go(func() {
			g, err := l.Acquire(ctx, key)
			if err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			if err := g.Release(ctx); err != nil {
				t.Errorf("waiter %d release: %v", i, err)
			}
		})
		f.awaitQueue(t, key, int64(i+1))
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, w := range order {
		if w != i {
			t.Fatalf("grant order %v, want the request order 0..%d", order, waiters-1)
		}
	}
	if len(order) != waiters {
		t.Fatalf("%d of %d waiters granted", len(order), waiters)
	}
}

// TestLeavesQueueOnCancel: a waiter whose ctx ends leaves the queue, so
// it does not hold up the threads behind it.
func TestLeavesQueueOnCancel(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const key = "cancel"
	h, err := f.locker(t, f.addr, 5*time.Second, 0).Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(ctx)
	wctx, wcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := f.locker(t, f.addr, 5*time.Second, 0).Acquire(wctx, key)
		done <- err
	}()
	f.awaitQueue(t, key, 1)
	wcancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Acquire = %v, want context.Canceled", err)
	}
	f.awaitQueue(t, key, 0)
	if n, _ := f.probe.ZCard(ctx, redissonlock.Name(timeoutsPrefix, DefaultKeyPrefix+key)).Result(); n != 0 {
		t.Fatalf("timeouts hold %d threads after the waiter left, want 0", n)
	}
}

// TestStaleWaiter: a waiter whose host vanished (its connections go
// silent through a fault proxy) keeps its place at the front until its
// timeout, and not beyond: the next waiter is granted once it passed.
func TestStaleWaiter(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const key = "stale"
	const ttl, wait = 2 * time.Second, time.Second
	proxy := faultproxy.New()
	defer proxy.Close()
	link, err := proxy.Link("vanishing", f.addr)
	if err != nil {
		t.Fatal(err)
	}

	h, err := f.locker(t, f.addr, ttl, wait).Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	vanishing := f.locker(t, link.Addr(), ttl, wait)
	vctx, vcancel := context.WithCancel(ctx)
	vdone := make(chan struct{})
	go func() {
		defer close(vdone)
		if g, err := vanishing.Acquire(vctx, key); err == nil {
			t.Error("the vanished waiter was granted")
			g.Release(ctx)
		}
	}()
	defer func() { vcancel(); link.Restore(); <-vdone }()
	f.awaitQueue(t, key, 1)
	granted := make(chan grant, 1)
	go func() {
		g, err := f.locker(t, f.addr, ttl, wait).Acquire(ctx, key)
		granted <- grant{g, time.Now(), err}
	}()
	f.awaitQueue(t, key, 2)
	front, err := f.probe.LIndex(ctx, queueName(key), 0).Result()
	if err != nil {
		t.Fatal(err)
	}
	score, err := f.probe.ZScore(ctx, redissonlock.Name(timeoutsPrefix, DefaultKeyPrefix+key), front).Result()
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.UnixMilli(int64(score))
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	if err := h.Release(ctx); err != nil { // its message goes to the vanished waiter
		t.Fatal(err)
	}

	select {
	case g := <-granted:
		if g.err != nil {
			t.Fatal(g.err)
		}
		defer g.held.Release(ctx)
		// The timeout is on the wall clock of this host (the client's).
		if g.at.Before(timeout.Add(-50 * time.Millisecond)) {
			t.Errorf("next waiter granted %v before the vanished one's timeout: its place was not kept", timeout.Sub(g.at))
		}
		if late := g.at.Sub(timeout); late > time.Second {
			t.Errorf("next waiter granted %v after the vanished one's timeout, want within 1s", late)
		} else {
			t.Logf("next waiter granted %v after the vanished one's timeout, %v after the release", late, g.at.Sub(released))
		}
	case <-time.After(time.Until(timeout) + 5*time.Second):
		t.Fatal("the next waiter is still blocked 5s after the vanished one's timeout")
	}
	if n, _ := f.probe.LLen(ctx, queueName(key)).Result(); n != 0 {
		t.Errorf("queue holds %d threads after the grant, want 0 (the vanished one dropped)", n)
	}
}

type grant struct {
	held bench.Held
	at   time.Time
	err  error
}

// TestContender checks what the row describes besides the lock: its
// settings name the queue, the wait timeout and the simplifications, and
// its claims are about it, the FIFO one among them.
func TestContender(t *testing.T) {
	c := Contender()
	for _, k := range []string{"ttl", "wait", "watchdog_interval", "lost_after", "pool_size", "counters", "simplified", "queue", "wait_timeout", "give_up_cleanup"} {
		if c.Settings[k] == "" {
			t.Errorf("setting %q missing", k)
		}
	}
	ids, fifo := map[string]bool{}, false
	for _, r := range c.Claims {
		if r.Subject != Name || ids[r.ID] {
			t.Errorf("claim %s: subject %q (want %q), id repeated %v", r.ID, r.Subject, Name, ids[r.ID])
		}
		// The report's claims table shows the claim without its subject.
		if !strings.Contains(r.Claim, Subject) {
			t.Errorf("claim %s: %q does not name the lock (%q)", r.ID, r.Claim, Subject)
		}
		ids[r.ID] = true
		fifo = fifo || r.Metric == "fifo_inversions_per_1k"
	}
	if !fifo {
		t.Error("no claim on FIFO inversions")
	}
}
