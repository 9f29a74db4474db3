package redisbench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestRedlockFastSeam runs the seam test (mutual exclusion, tokens, Lost,
// release) on the redlock-fast row over five local masters.
func TestRedlockFastSeam(t *testing.T) {
	c := RedlockFastContender()
	benchtest.Contender(t, c, benchtest.Start(t, c.Server), time.Second, 8, 10)
}

// TestRedlockFastWithMinorityDown kills two of five masters and times
// acquire+release cycles under redlock's connection settings and under
// redlock-fast's. go-redis dials a master that is down 5 times, 100ms
// apart, before it fails a command, so each redlock release waits at least
// 400ms (a lower bound: the backoff sleeps) and each try its whole
// timeout_factor × ttl; with one refused dial per command, redlock-fast's
// cycles take well under that.
func TestRedlockFastWithMinorityDown(t *testing.T) {
	if testing.Short() {
		t.Skip("times cycles with masters down")
	}
	servers := benchtest.Start(t, RedlockMasters).Servers(RedlockMasters.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, s := range servers[:2] {
		if err := s.Kill(ctx); err != nil {
			t.Fatal(err)
		}
	}
	median := func(to Timeouts) (acquire, release time.Duration) {
		l, err := NewRedlock(RedlockConfig{Addrs: bench.Addrs(servers), TTL: 2 * time.Second, Timeouts: to})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		var as, rs []time.Duration
		for range 5 {
			t0 := time.Now()
			h, err := l.Acquire(ctx, "minority")
			if err != nil {
				t.Fatalf("%+v: acquire with 3 of 5 masters: %v", to, err)
			}
			t1 := time.Now()
			if err := h.Release(ctx); err != nil {
				t.Fatalf("%+v: release with 3 of 5 masters: %v", to, err)
			}
			as, rs = append(as, t1.Sub(t0)), append(rs, time.Since(t1))
		}
		slices.Sort(as)
		slices.Sort(rs)
		return as[2], rs[2]
	}
	slowA, slowR := median(Timeouts{})
	fastA, fastR := median(FastTimeouts)
	t.Logf("median with 2 of 5 masters down: redlock acquire %v release %v; redlock-fast acquire %v release %v", slowA, slowR, fastA, fastR)
	if slowR < 400*time.Millisecond {
		t.Errorf("redlock release %v, want ≥ 400ms (go-redis's 4 dial backoffs of 100ms)", slowR)
	}
	if fastR >= 300*time.Millisecond || fastA >= 90*time.Millisecond {
		t.Errorf("redlock-fast acquire %v release %v, want well under redlock's try timeout (100ms) and dial backoffs (400ms)", fastA, fastR)
	}
}
