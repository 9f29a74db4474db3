package monolock_test

// The contract of the public docs page start/quickstart.mdx: its Go
// program compiles unchanged (only the import path differs: the docs
// import github.com/monolock-dev/monolock-go), and its promises hold: a
// second process queues FIFO and is promoted the moment the first stops,
// with a larger token.

import (
	"context"
	"testing"
	"time"

	monolock "github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

func doTheWork(ctx context.Context, token uint64) error { return nil }

// main is the quick start's program, unchanged. It is not run: it dials
// the fixed address 127.0.0.1:7070.
func main() {
	c := monolock.New(monolock.Config{Address: "127.0.0.1:7070"})

	// Blocks until this process owns "nightly-import", runs the
	// function, and releases the lock when it returns.
	err := c.Do(context.Background(), "nightly-import", 2*time.Second,
		func(ctx context.Context, token uint64) error {
			// Only one process across your fleet runs this at a time.
			// ctx is cancelled the moment ownership stops being
			// confirmed; token fences out stale holders (see below).
			return doTheWork(ctx, token)
		})
	if err != nil {
		// ...
	}
}

var _ = main

// TestDocsQuickstartHandover: "Run the program two times at the same
// time": the second waits, is promoted when the first stops, and its
// token is larger (41, then 42 in the page's diagram).
func TestDocsQuickstartHandover(t *testing.T) {
	inBubble(t, func(t *testing.T, srv *monolocktest.Server) {
		c := pipeClient(srv)
		first, err := c.Acquire(t.Context(), "nightly-import", 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		second := make(chan uint64, 1)
		secondDone := make(chan error, 1)
		go func() {
			secondDone <- c.Do(t.Context(), "nightly-import", 2*time.Second, func(ctx context.Context, token uint64) error {
				second <- token
				return nil
			})
		}()
		queuedNow(t, srv, "nightly-import", 1)
		select {
		case <-second:
			t.Fatal("the second process ran while the first held the lock")
		default:
		}
		first.Release()
		if token := <-second; token <= first.Token() {
			t.Fatalf("second token %d not above the first %d", token, first.Token())
		}
		if err := <-secondDone; err != nil {
			t.Fatalf("second Do = %v", err)
		}
	})
}
