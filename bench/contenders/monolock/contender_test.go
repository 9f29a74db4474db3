package monolock

import (
	"context"
	"errors"
	"maps"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/external"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

func TestMutualExclusion(t *testing.T) {
	srv := monolocktest.NewServer(t)
	l := New(monolock.Config{Address: srv.Addr}, 10*time.Second)
	defer l.Close()
	benchtest.MutualExclusion(t, l, "k000", 16, 20, time.Minute)
}

func TestAcquireReturnsCtxErrWhileQueued(t *testing.T) {
	srv := monolocktest.NewServer(t)
	l := New(monolock.Config{Address: srv.Addr}, 10*time.Second)
	h, err := l.Acquire(context.Background(), "busy")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(context.Background())
	if _, ok := h.Token(); !ok {
		t.Fatal("monolock grant without a token")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := l.Acquire(ctx, "busy"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued Acquire = %v, want context.DeadlineExceeded", err)
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
	got, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"monolock_waiters": 2, "monolock_acquires_total": 17, "monolock_wait_seconds_sum": 0.25}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseMetrics(strings.NewReader("monolock_waiters two\n")); err == nil {
		t.Error("a non-numeric value parsed")
	}
}

// TestCounters reads a real server's /metrics: a queued waiter shows in
// Waiting, each claim is one attempt; without an ops address the counters
// are unavailable.
func TestCounters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ml := monolocktest.NewServer(t)
	ops := httptest.NewServer(ml.Server().OpsHandler())
	defer ops.Close()
	opsAddr := strings.TrimPrefix(ops.URL, "http://")
	if err := healthy(ctx, ml.Addr, opsAddr); err != nil {
		t.Fatalf("healthy = %v", err)
	}
	d := external.New([]*bench.ServerSpec{Server}, map[string]external.Addrs{Server.Name: {Addrs: []string{ml.Addr}, Ops: []string{opsAddr}}})
	p, err := NewCounters(d.Servers(Server.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	l := New(monolock.Config{Address: ml.Addr}, 2*time.Second)
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
		c, err := p.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Waiting == before.Waiting+1 {
			if got := c.Attempts - before.Attempts; got != 1 {
				t.Errorf("ACQUIREs +%d, want +1", got)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the queued waiter never showed in Waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	<-done
	h.Release(ctx)

	bare := external.New([]*bench.ServerSpec{Server}, map[string]external.Addrs{Server.Name: {Addrs: []string{ml.Addr}}})
	if _, err := NewCounters(bare.Servers(Server.Name)); !errors.Is(err, bench.ErrNoCounters) {
		t.Errorf("NewCounters without an ops address = %v, want ErrNoCounters", err)
	}
}
