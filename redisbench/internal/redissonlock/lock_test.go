package redissonlock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/faults/faultproxy"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/internal/redissonlock"
	"github.com/monolock/monolock-bench/redisbench/redisson"
	"github.com/monolock/monolock-bench/redisbench/redissonfair"
)

// lockers are both Redisson locks, opened as their contenders open them.
var lockers = []struct {
	name   string
	prefix string // the default key prefix
	open   func(cfg redissonlock.Config) (bench.Locker, error)
}{
	{"redisson", redisson.DefaultKeyPrefix, func(cfg redissonlock.Config) (bench.Locker, error) { return redisson.New(cfg) }},
	{"redisson-fair", redissonfair.DefaultKeyPrefix, func(cfg redissonlock.Config) (bench.Locker, error) {
		return redissonfair.New(redissonfair.Config{Config: cfg})
	}},
}

func open(t *testing.T, open func(redissonlock.Config) (bench.Locker, error), cfg redissonlock.Config) bench.Locker {
	t.Helper()
	l, err := open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

type grant struct {
	held bench.Held
	at   time.Time
	err  error
}

// TestWokenByMessage shows a waiter that does not poll: once it counts as
// waiting (subscribed, refused again), it sends nothing while it waits a
// second for a held lock, the server serving only the holder's renewals;
// the release's message grants it well before the remaining TTL, at which
// it would otherwise try again.
func TestWokenByMessage(t *testing.T) {
	servers := benchtest.Start(t, redisbench.Server).Servers(redisbench.Server.Name)
	// At ttl 6s the watchdog renews every 2s, so a refused try is told at
	// least 4s: a waiter not woken by the message could not be granted
	// within grantBound of the release.
	const ttl = 6 * time.Second
	const grantBound = 2 * time.Second
	for _, lk := range lockers {
		t.Run(lk.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := redissonlock.Config{Addr: servers[0].Addr(), TTL: ttl}
			holder, waiter := open(t, lk.open, cfg), open(t, lk.open, cfg)
			probe, err := redissonlock.NewCounters(servers)
			if err != nil {
				t.Fatal(err)
			}
			defer probe.Close()
			key := "woken-" + lk.name
			h, err := holder.Acquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			base := counts(t, probe)
			granted := make(chan grant, 1)
			go func() {
				held, err := waiter.Acquire(ctx, key)
				granted <- grant{held, time.Now(), err}
			}()
			for counts(t, probe).Waiting == base.Waiting {
				select {
				case g := <-granted:
					t.Fatalf("waiter returned before it waited: %v", g.err)
				case <-ctx.Done():
					t.Fatal("the waiter never counted as waiting")
				case <-time.After(5 * time.Millisecond):
				}
			}
			before := counts(t, probe)
			if tries := before.Attempts - base.Attempts; tries != 2 {
				t.Errorf("%d tries before the waiter counted as waiting, want 2 (before and after subscribing)", tries)
			}
			time.Sleep(time.Second)
			after := counts(t, probe)
			renewals := after.KeepAlives - before.KeepAlives
			// A renewal is EVALSHA, HEXISTS and PEXPIRE; 2 for a HELLO of
			// a connection go-redis may replace. A try is 4 or more.
			other := (after.Commands - before.Commands) - 3*renewals
			if tries := after.Attempts - before.Attempts; tries != 0 {
				t.Errorf("%d tries while the waiter waited 1s for a held lock, want 0", tries)
			}
			if renewals > 1 {
				t.Errorf("%d renewals in 1s at ttl %v, want at most 1", renewals, ttl)
			}
			if other > 2 {
				t.Errorf("%d commands besides renewals while the waiter waited 1s, want at most 2", other)
			}
			t.Logf("while waiting 1s: %d commands, %d tries, %d renewals", after.Commands-before.Commands, after.Attempts-before.Attempts, renewals)

			released := time.Now()
			if err := h.Release(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case g := <-granted:
				if g.err != nil {
					t.Fatal(g.err)
				}
				defer g.held.Release(ctx)
				if d := g.at.Sub(released); d > grantBound {
					t.Errorf("granted %v after the release, want within %v (the unlock message)", d, grantBound)
				} else {
					t.Logf("granted %v after the release", d)
				}
			case <-time.After(grantBound):
				t.Fatalf("waiter not granted within %v of the release", grantBound)
			}
		})
	}
}

func counts(t *testing.T, p bench.Coordinator) bench.Counts {
	t.Helper()
	c, err := p.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWatchdog checks the holder's side of the TTL: the watchdog keeps a
// lock held for several TTLs; a renewal refused (the hash deleted) closes
// Lost; renewals that get no answer close Lost at 0.8 × TTL after the last
// confirmed one, before the lock expires on the server (see silent).
func TestWatchdog(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out several TTLs of a real Redis: not under -short (make test runs it)")
	}
	servers := benchtest.Start(t, redisbench.Server).Servers(redisbench.Server.Name)
	addr := servers[0].Addr()
	probe := redis.NewClient(&redis.Options{Addr: addr})
	defer probe.Close()
	const ttl = 900 * time.Millisecond
	for _, lk := range lockers {
		t.Run(lk.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			l := open(t, lk.open, redissonlock.Config{Addr: addr, TTL: ttl})
			key := "watchdog-" + lk.name
			lockKey := lk.prefix + key

			h, err := l.Acquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(4 * ttl) // only the watchdog keeps the hash
			if n, err := probe.HLen(ctx, lockKey).Result(); err != nil || n != 1 {
				t.Fatalf("after 4×TTL: HLEN = %d, %v; want the holder's field", n, err)
			}
			select {
			case <-h.Lost():
				t.Fatal("Lost closed while the watchdog kept the lock")
			default:
			}
			if err := h.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if n, _ := probe.Exists(ctx, lockKey).Result(); n != 0 {
				t.Fatal("lock still exists after Release")
			}

			// Refused: the hash is gone at the next renewal.
			h, err = l.Acquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if err := probe.Del(ctx, lockKey).Err(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-h.Lost():
			case <-time.After(3 * ttl):
				t.Fatal("Lost not closed after the lock was deleted")
			}
			if err := h.Release(ctx); !errors.Is(err, redisbench.ErrNotHeld) {
				t.Fatalf("Release after loss = %v, want ErrNotHeld", err)
			}

			// Silent: renewals unanswered (the holder's connections
			// blackholed), while the server runs on and expires the lock.
			silent(t, ctx, lk.open, addr, probe, lockKey, key)
		})
	}
}

// silent checks the watchdog's give-up against the server's own clock: a
// holder whose connections go silent after a confirmed renewal is told
// its lock is lost GiveUpFactor (0.8) × TTL after that renewal started,
// so with 0 < PTTL ≤ 0.2 × TTL (+ TTL/10 for the renewal's way to the
// server and the reading's) left on the server when Lost closes: before
// the lock expires there, and not before 0.8 × TTL of silence. The TTL
// is long enough that a machine slow by a few hundred ms stays within
// both bounds.
func silent(t *testing.T, ctx context.Context, openLocker func(redissonlock.Config) (bench.Locker, error), addr string, probe *redis.Client, lockKey, key string) {
	t.Helper()
	const ttl = 3 * time.Second
	proxy := faultproxy.New()
	defer proxy.Close()
	link, err := proxy.Link("holder", addr)
	if err != nil {
		t.Fatal(err)
	}
	l := open(t, openLocker, redissonlock.Config{Addr: link.Addr(), TTL: ttl})
	h, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	acquired := time.Now()
	pttl := func() time.Duration {
		ms, err := probe.Do(ctx, "pttl", lockKey).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return time.Duration(ms) * time.Millisecond
	}
	// The first renewal (at TTL/3) sets the TTL back to the full TTL:
	// once the server shows it, and its answer has had time to reach the
	// holder, the next renewal is most of TTL/3 away.
	for time.Since(acquired) < ttl/6 || pttl() < ttl-100*time.Millisecond {
		select {
		case <-ctx.Done():
			t.Fatal("the first renewal never reached the server")
		case <-h.Lost():
			t.Fatal("Lost closed while the watchdog kept the lock")
		case <-time.After(10 * time.Millisecond):
		}
	}
	time.Sleep(200 * time.Millisecond)
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Lost():
	case <-time.After(3 * ttl): // a hang guard, not the bound
		t.Fatalf("Lost not closed %v after the holder went silent", 3*ttl)
	}
	left := pttl()
	margin := time.Duration((1 - redisbench.GiveUpFactor) * float64(ttl))
	switch {
	case left <= 0:
		t.Errorf("Lost closed after the lock expired on the server (PTTL %v): the give-up must come first", left)
	case left > margin+ttl/10:
		t.Errorf("Lost closed with %v of the TTL left on the server, want at most %v: given up before %v×TTL of silence", left, margin+ttl/10, redisbench.GiveUpFactor)
	default:
		t.Logf("Lost closed with %v of the TTL %v left on the server", left, ttl)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	_ = h.Release(ctx) // held still or expired: either is fine here
}

// TestSubscriptions: the waiting threads of one client share one
// subscription, and each release of Redisson's lock wakes one of them;
// with SeparateClients each thread subscribes on a connection of its own,
// as a client of its own would, and each release wakes every one of them
// (the fair lock wakes the front thread only, either way). Each thread
// counts as waiting, and all are granted in turn long before the
// remaining TTL.
func TestSubscriptions(t *testing.T) {
	servers := benchtest.Start(t, redisbench.Server).Servers(redisbench.Server.Name)
	rc := redis.NewClient(&redis.Options{Addr: servers[0].Addr()})
	defer rc.Close()
	subscribes := func() int64 {
		info, err := rc.Info(context.Background(), "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(info) {
			if rest, ok := strings.CutPrefix(line, "cmdstat_subscribe:calls="); ok {
				n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
				return n
			}
		}
		return 0
	}
	const ttl, waiters = 10 * time.Second, 50
	for _, lk := range lockers {
		for _, separate := range []bool{false, true} {
			fair := lk.name == "redisson-fair"
			t.Run(lk.name+map[bool]string{false: "/shared", true: "/separate"}[separate], func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cfg := redissonlock.Config{Addr: servers[0].Addr(), TTL: ttl}
				holder := open(t, lk.open, cfg)
				cfg.SeparateClients = separate
				client := open(t, lk.open, cfg)
				probe, err := redissonlock.NewCounters(servers)
				if err != nil {
					t.Fatal(err)
				}
				defer probe.Close()
				key := "subscriptions-" + strconv.FormatBool(separate)
				h, err := holder.Acquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				base, subs := counts(t, probe), subscribes()
				var wg sync.WaitGroup
				var granted atomic.Int64
				for range waiters {
					wg.Go(func() {
						g, err := client.Acquire(ctx, key)
						if err != nil {
							t.Error(err)
							return
						}
						granted.Add(1)
						_ = g.Release(ctx)
					})
				}
				for counts(t, probe).Waiting-base.Waiting < waiters {
					select {
					case <-ctx.Done():
						t.Fatalf("%d of %d threads counted as waiting", counts(t, probe).Waiting-base.Waiting, waiters)
					case <-time.After(5 * time.Millisecond):
					}
				}
				queued := counts(t, probe)
				// The fair lock subscribes each thread to a channel of its
				// own; separate clients subscribe each thread.
				want := int64(1)
				if fair || separate {
					want = waiters
				}
				if n := subscribes() - subs; n != want {
					t.Errorf("%d SUBSCRIBEs for %d waiting threads, want %d", n, waiters, want)
				}
				if !fair {
					channel := redissonlock.Name("redisson_lock__channel", lk.prefix+key)
					n, err := rc.PubSubNumSub(ctx, channel).Result()
					if err != nil {
						t.Fatal(err)
					}
					if n[channel] != want {
						t.Errorf("%d connections subscribed to %s, want %d", n[channel], channel, want)
					}
				}
				start := time.Now()
				if err := h.Release(ctx); err != nil {
					t.Fatal(err)
				}
				wg.Wait()
				if d := time.Since(start); d > ttl/2 {
					t.Errorf("%d waiters granted in %v, want well within the TTL %v", granted.Load(), d, ttl)
				}
				tries := counts(t, probe).Attempts - queued.Attempts
				switch {
				case separate && !fair:
					// Every release reaches every waiter still waiting:
					// about waiters × (waiters+1) / 2 tries in all.
					if least := int64(waiters * (waiters - 1) / 4); tries < least {
						t.Errorf("%d tries for %d grants of separate clients, want at least %d (each release wakes each waiter)", tries, waiters, least)
					}
				case tries > 2*waiters:
					t.Errorf("%d tries for %d grants after the queue formed, want at most %d (one woken per release)", tries, waiters, 2*waiters)
				}
				t.Logf("%d tries for %d grants", tries, waiters)
			})
		}
	}
}
