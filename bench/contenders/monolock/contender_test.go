package monolock

import (
	"context"
	"errors"
	"io"
	"net/http"
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

// TestCountersRead serves /metrics as the monolock server writes them
// and checks the counts, then the errors: a status other than 200, a
// series missing or of another type, a value that is no number.
func TestCountersRead(t *testing.T) {
	body := `# HELP monolock_waiters Sessions queued for a lock.
# TYPE monolock_waiters gauge
monolock_waiters 2
# TYPE monolock_releases_total counter
monolock_releases_total{reason="graceful"} 5
# TYPE monolock_connections_accepted_total counter
monolock_connections_accepted_total 17
# TYPE monolock_heartbeats_total counter
monolock_heartbeats_total 40
# TYPE monolock_wait_seconds summary
monolock_wait_seconds_sum 0.25
monolock_wait_seconds_count 3
`
	read := func(status int, body string) (bench.Counts, error) {
		t.Helper()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			io.WriteString(w, body)
		}))
		defer srv.Close()
		d := external.New([]*bench.ServerSpec{Server}, map[string]external.Addrs{Server.Name: {Addrs: []string{"unused:1"}, Ops: []string{strings.TrimPrefix(srv.URL, "http://")}}})
		p, err := NewCounters(d.Servers(Server.Name))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		return p.Counts(context.Background())
	}
	got, err := read(http.StatusOK, body)
	if err != nil {
		t.Fatal(err)
	}
	if want := (bench.Counts{Commands: 57, Attempts: 17, Waiting: 2, KeepAlives: 40}); got != want {
		t.Errorf("Counts = %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		what   string
		status int
		body   string
		want   string
	}{
		{"a 500", http.StatusInternalServerError, body, "500"},
		{"no heartbeats", http.StatusOK, strings.ReplaceAll(body, "monolock_heartbeats_total", "monolock_renewals_total"), metricHeartbeats},
		{"waiters as a counter", http.StatusOK, strings.Replace(body, "monolock_waiters gauge", "monolock_waiters counter", 1), metricWaiters},
		{"a word for a number", http.StatusOK, strings.Replace(body, "monolock_waiters 2", "monolock_waiters two", 1), "two"},
	} {
		if _, err := read(c.status, c.body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one naming %q", c.what, err, c.want)
		}
	}
}

// TestCounters reads a real server's /metrics: a queued waiter shows in
// Waiting, each acquisition is one attempt; without an ops address the counters
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
