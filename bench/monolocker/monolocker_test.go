package monolocker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

func TestMutualExclusion(t *testing.T) {
	srv := monolocktest.NewServer(t)
	l, err := New(srv.Addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	benchtest.MutualExclusion(t, l, "k000", 16, 20, time.Minute)
}

func TestAcquireReturnsCtxErrWhileQueued(t *testing.T) {
	srv := monolocktest.NewServer(t)
	l, err := New(srv.Addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
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
