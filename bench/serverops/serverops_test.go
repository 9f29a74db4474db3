package serverops

import (
	"context"
	"errors"
	"maps"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/external"
	"github.com/monolock/monolock-bench/bench/monolocker"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

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
			got, err := ParseCommandStats(tt.info)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseMetrics(t *testing.T) {
	text := `# HELP monolock_waiters Sessions queued for a lock.
# TYPE monolock_waiters gauge
monolock_waiters 2
monolock_acquires_total 17
monolock_releases_total{reason="graceful"} 5
monolock_wait_seconds_sum 0.25
`
	got, err := ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"monolock_waiters": 2, "monolock_acquires_total": 17, "monolock_wait_seconds_sum": 0.25}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := ParseMetrics(strings.NewReader("monolock_waiters two\n")); err == nil {
		t.Error("a non-numeric value parsed")
	}
}

// TestProbe reads real servers: a Redis, and a monolock server whose ops
// handler is served over HTTP.
func TestProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rds := benchtest.StartRedis(t)
	ml := monolocktest.NewServer(t)
	ops := httptest.NewServer(ml.Server().OpsHandler())
	defer ops.Close()
	d := external.New(map[string][]string{
		bench.RoleRedis:       {rds.Addr},
		bench.RoleMonolock:    {ml.Addr},
		bench.RoleMonolockOps: {strings.TrimPrefix(ops.URL, "http://")},
	})
	env := func(role string) *bench.Env {
		return &bench.Env{Contender: bench.Contender{Name: role, Role: role}, Addrs: d.Addrs(role), Deployment: d}
	}

	t.Run("redis", func(t *testing.T) {
		p, err := New(env(bench.RoleRedis))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		before, err := p.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(&redis.Options{Addr: rds.Addr, DisableIdentity: true})
		defer c.Close()
		c.SetNX(ctx, "k", "v", time.Second)
		c.SetNX(ctx, "k", "v", time.Second) // refused, still an attempt
		c.Get(ctx, "k")
		after, err := p.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// HELLO on connect, two SETs, one GET; the probe's INFOs are left out.
		if got := after.Attempts - before.Attempts; got != 2 {
			t.Errorf("attempts +%d, want +2", got)
		}
		if got := after.Commands - before.Commands; got < 3 || got > 4 {
			t.Errorf("commands +%d, want 3 (+1 for HELLO)", got)
		}
		if _, err := p.Waiters(ctx); !errors.Is(err, ErrNoQueue) {
			t.Errorf("Waiters = %v, want ErrNoQueue", err)
		}
	})

	t.Run("monolock", func(t *testing.T) {
		p, err := New(env(bench.RoleMonolock))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		l, err := monolocker.New(ml.Addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		h, err := l.Acquire(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		before, err := p.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if h2, err := l.Acquire(wctx, "k"); err == nil {
				h2.Release(ctx)
			}
		}()
		for {
			w, err := p.Waiters(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if w == 1 {
				break
			}
			if ctx.Err() != nil {
				t.Fatal("the queued waiter never showed in monolock_waiters")
			}
			time.Sleep(5 * time.Millisecond)
		}
		after, err := p.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := after.Attempts - before.Attempts; got != 1 {
			t.Errorf("ACQUIREs +%d, want +1", got)
		}
		stop()
		<-done
		h.Release(ctx)
	})

	t.Run("unavailable", func(t *testing.T) {
		bare := external.New(map[string][]string{bench.RoleMonolock: {ml.Addr}})
		e := &bench.Env{Contender: bench.Contender{Role: bench.RoleMonolock}, Addrs: bare.Addrs(bench.RoleMonolock), Deployment: bare}
		if _, err := New(e); !errors.Is(err, ErrUnavailable) {
			t.Errorf("New without an ops address = %v, want ErrUnavailable", err)
		}
		if _, err := New(env(bench.RoleTCPFloor)); !errors.Is(err, ErrUnavailable) {
			t.Errorf("New for tcp-floor = %v, want ErrUnavailable", err)
		}
	})
}
