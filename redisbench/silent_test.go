package redisbench

import (
	"context"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestPausedMaster freezes real Redis servers (SIGSTOP on the local
// backend: sockets open, nothing answers) and checks that the configured
// timeouts keep a silent master from stalling a try: a SET NX on the
// paused single Redis fails after about DefaultIOTimeout instead of
// go-redis's defaults (3s read timeout, 3 retries), and Redlock with one
// of five masters paused still grants on the other four.
func TestPausedMaster(t *testing.T) {
	d := benchtest.Start(t, Server, RedlockMasters)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pause := func(s bench.Server) {
		t.Helper()
		if err := s.Pause(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Unpause(context.Background()) })
	}
	// go-redis's defaults would take 4 × 3s here; the bound is generous
	// for a loaded machine and still far below that.
	const bound = 4 * time.Second

	single := d.Servers(Server.Name)[0]
	r, err := NewRedis(Config{Addr: single.Addr(), TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pause(single)
	begin := time.Now()
	if h, err := r.Acquire(ctx, "paused"); err == nil {
		t.Fatalf("acquire on a paused Redis succeeded: %v", h)
	} else if took := time.Since(begin); took > bound {
		t.Errorf("acquire on a paused Redis failed after %v (%v), want within %v", took, err, bound)
	}

	masters := d.Servers(RedlockMasters.Name)
	rl, err := NewRedlock(RedlockConfig{Addrs: bench.Addrs(masters), TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	pause(masters[0])
	begin = time.Now()
	h, err := rl.Acquire(ctx, "one-paused")
	if err != nil {
		t.Fatalf("Redlock with one of five masters paused: %v", err)
	}
	if took := time.Since(begin); took > bound {
		t.Errorf("Redlock acquire with a paused master took %v, want within %v", took, bound)
	}
	if err := h.Release(ctx); err != nil {
		t.Errorf("release: %v", err)
	}
}
