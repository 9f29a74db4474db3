package redisbench

import (
	"context"
	"errors"
	"maps"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

func TestMutualExclusion(t *testing.T) {
	if testing.Short() {
		t.Skip("16 workers on each Redis lock over real servers: not under -short (make test runs it)")
	}
	d := benchtest.Start(t, Server, RedlockMasters)
	single := d.Servers(Server.Name)[0].Addr()
	masters := bench.Addrs(d.Servers(RedlockMasters.Name))
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
		{"redlock-fast/jitter", func() (bench.Locker, error) {
			return NewRedlock(RedlockConfig{Addrs: masters, TTL: 10 * time.Second, Timeouts: FastTimeouts})
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
	if testing.Short() {
		t.Skip("waits through three leases of 3s on a real Redis: not under -short (make test runs it)")
	}
	addr := startRedis(t)
	// Renewals every TTL/3, given up at 0.8 × TTL. At 750ms that left a
	// renewal 350ms of slack, and a test run at a load average above 17
	// on two cores still lost the key once; 3s leaves 1.4s.
	const ttl = 3 * time.Second
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
	time.Sleep(2 * ttl) // past the TTL: only the watchdog keeps the key
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
	// It expires on its own (about one TTL) unless a watchdog still
	// extends it.
	for deadline := time.Now().Add(3 * ttl); ; time.Sleep(50 * time.Millisecond) {
		if n, _ := probe.Exists(ctx, held.key).Result(); n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("key was extended after Release: the watchdog did not stop")
		}
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
	servers := benchtest.Start(t, RedlockMasters).Servers(RedlockMasters.Name)
	masters := bench.Addrs(servers)
	kill := func(i int) {
		if err := servers[i].Kill(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	l, err := NewRedlock(RedlockConfig{Addrs: masters, TTL: 2 * time.Second, Wait: SpinWait, Tries: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	kill(0)
	h, err := l.Acquire(ctx, "quorum")
	if err != nil {
		t.Fatalf("one master down: %v, want a grant (quorum 3 of 5)", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("release with one master down: %v", err)
	}

	kill(1)
	kill(2)
	_, err = l.Acquire(ctx, "quorum")
	if !errors.Is(err, bench.ErrGaveUp) {
		t.Fatalf("three masters down: %v, want an error wrapping bench.ErrGaveUp", err)
	}
}

// TestRedisWaitsUntilCancelled: a waiter on a held key keeps trying (the
// server counts its SET NX attempts) and returns only when its context is
// cancelled, with the context's error. Events, not a deadline: the test
// cancels once the server has seen three attempts of the waiter's.
func TestRedisWaitsUntilCancelled(t *testing.T) {
	addr := startRedis(t)
	l, err := NewRedis(Config{Addr: addr, TTL: time.Minute, Wait: SpinWait})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	bg := context.Background()
	h, err := l.Acquire(bg, "busy")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(bg)
	probe := redis.NewClient(&redis.Options{Addr: addr})
	defer probe.Close()
	sets := func() int64 {
		info, err := probe.Info(bg, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		calls, err := parseCommandStats(info)
		if err != nil {
			t.Fatal(err)
		}
		return calls["set"]
	}
	before := sets()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := l.Acquire(ctx, "busy")
		done <- err
	}()
	for sets() < before+3 {
		select {
		case err := <-done:
			t.Fatalf("Acquire on a held key returned %v before it was cancelled", err)
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Acquire on a held key = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Acquire did not return within a minute of its cancellation")
	}
}

// startRedis starts one redis-server for the test and returns its address.
func startRedis(t *testing.T) string {
	return benchtest.Start(t, Server).Servers(Server.Name)[0].Addr()
}

// TestServerAndCounters checks what the contenders describe besides the
// lock: the server's version, and the coordinator counters (INFO
// commandstats) that fairness and handover read.
func TestServerAndCounters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	servers := benchtest.Start(t, Server).Servers(Server.Name)
	addr := servers[0].Addr()
	if v, err := ServerVersion(ctx, addr); err != nil || v == "" {
		t.Fatalf("ServerVersion = %q, %v", v, err)
	}
	p, err := NewCounters(servers)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	before, err := p.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(addr, 1)
	defer c.Close()
	c.SetNX(ctx, "k", "v", time.Second)
	c.SetNX(ctx, "k", "v", time.Second) // refused, still an attempt
	c.Get(ctx, "k")
	after, err := p.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// HELLO on connect, two SETs, one GET; the counters' own INFOs are
	// left out.
	if got := after.Attempts - before.Attempts; got != 2 {
		t.Errorf("attempts +%d, want +2", got)
	}
	if got := after.Waiting - before.Waiting; got != 2 {
		t.Errorf("waiting +%d, want +2 (a waiter polls: every attempt)", got)
	}
	if got := after.Commands - before.Commands; got < 3 || got > 4 {
		t.Errorf("commands +%d, want 3 (+1 for HELLO)", got)
	}
}

func TestParseCommandStats(t *testing.T) {
	tests := []struct {
		name    string
		info    string
		want    map[string]int64
		wantErr bool
	}{
		{
			name: "redis 7",
			info: "# Commandstats\r\n" +
				"cmdstat_set:calls=12,usec=40,usec_per_call=3.33,rejected_calls=0,failed_calls=0\r\n" +
				"cmdstat_evalsha:calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n" +
				"cmdstat_info:calls=7,usec=300,usec_per_call=42.86,rejected_calls=0,failed_calls=0\r\n",
			want: map[string]int64{"set": 12, "evalsha": 3, "info": 7},
		},
		{name: "empty", info: "# Commandstats\r\n", want: map[string]int64{}},
		{name: "no calls field", info: "cmdstat_set:usec=40\r\n", wantErr: true},
		{name: "bad number", info: "cmdstat_set:calls=x\r\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCommandStats(tt.info)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestContendersDialAsOpened opens every Redis row of the contender table
// both ways (with the client's own dialer and with a dialer of the
// scenario's, as the scale scenario does): each opening keeps the row's
// settings, redis-incr's INCR token among them (its dialled opening once
// dropped it), and a dialled Locker's connections go through the dialer.
func TestContendersDialAsOpened(t *testing.T) {
	addr := startRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []bench.Contender{RedisContender(), RedisIncrContender()} {
		wantToken := c.Name == "redis-incr"
		for _, dialled := range []bool{false, true} {
			d := &countingDialer{}
			var o bench.OpenOptions
			if dialled {
				o.Dialer = d
			}
			l, err := c.New(ctx, []string{addr}, 10*time.Second, o)
			if err != nil {
				t.Fatal(err)
			}
			var last uint64
			for i := range 2 {
				h, err := l.Acquire(ctx, "dial-"+c.Name)
				if err != nil {
					t.Fatal(err)
				}
				tok, ok := h.Token()
				if ok != wantToken || (ok && tok <= last) {
					t.Errorf("%s dialled=%v grant %d: token %d, %v; want a token %v, above %d", c.Name, dialled, i, tok, ok, wantToken, last)
				}
				last = tok
				if err := h.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			l.Close()
			if n := d.dials.Load(); dialled != (n > 0) {
				t.Errorf("%s dialled=%v: %d connections through the dialer", c.Name, dialled, n)
			}
		}
	}
}

// countingDialer dials as net.Dialer does and counts its connections.
type countingDialer struct {
	net.Dialer
	dials atomic.Int64
}

func (d *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.dials.Add(1)
	return d.Dialer.DialContext(ctx, network, addr)
}
