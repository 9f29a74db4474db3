package floors

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/local"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/redisbench"
)

// TestTCPAgainstServer runs the client against the real cmd/tcpfloor
// binary as a child process, the way the local backend runs it.
func TestTCPAgainstServer(t *testing.T) {
	srv := benchtest.Start(t, TCPServer).Servers(TCPServer.Name)[0]
	f, err := NewTCP(srv.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	// Concurrent acquisitions of one key all succeed at once: the floor locks
	// nothing, it only pays the connection's cost.
	var held []bench.Held
	for range 8 {
		h, err := f.Acquire(ctx, "k000")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, h)
	}
	for _, h := range held {
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Acquire(ctx, "toolong"); err == nil || !strings.Contains(err.Error(), "4-byte") {
		t.Fatalf("Acquire with a 7-byte key = %v, want a key-length error", err)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Acquire(ctx, "k000"); err == nil {
		t.Fatal("Acquire on a stopped server succeeded")
	}
}

func TestRedis(t *testing.T) {
	addr := benchtest.Start(t, redisbench.Server).Servers(redisbench.Server.Name)[0].Addr()
	f := NewRedis(addr, 0)
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
	free, err := local.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	dead := NewRedis(free, 0)
	defer dead.Close()
	if _, err := dead.Acquire(ctx, "any"); err == nil {
		t.Fatal("Acquire on a dead address succeeded")
	}
}
