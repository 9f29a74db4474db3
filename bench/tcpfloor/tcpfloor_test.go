package tcpfloor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/local"
)

// TestAgainstServer runs the client against the real cmd/tcpfloor binary as
// a child process, the way the local backend runs it.
func TestAgainstServer(t *testing.T) {
	dir := t.TempDir()
	bin, err := local.Build(context.Background(), dir, local.TCPFloorPackage)
	if err != nil {
		t.Fatal(err)
	}
	p, err := local.StartBinary(context.Background(), bench.RoleTCPFloor, bin, "-listen")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	f, err := New(p.Addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	// Concurrent claims on one key all succeed at once: the floor locks
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
	p.Stop()
	if _, err := f.Acquire(ctx, "k000"); err == nil {
		t.Fatal("Acquire on a stopped server succeeded")
	}
}
