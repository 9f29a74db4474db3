package benchtest

import (
	"context"
	"sync"
	"testing"

	"github.com/monolock/monolock-bench/bench"
)

// WatchLock runs watch on key until stop or the test's end. next waits
// for the watcher's next report other than a renewal (a lock's keep-alive
// renews at its own pace) and fails the test unless it is of kind want,
// or when ctx ends first; stop cancels the watch and waits for it to
// return.
func WatchLock(t *testing.T, ctx context.Context, watch bench.LockWatch, servers []bench.Server, key string) (next func(want bench.LockChangeKind) bench.LockChange, stop func()) {
	t.Helper()
	changes := make(chan bench.LockChange, 64)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		watch(wctx, servers, key, func(c bench.LockChange) { changes <- c })
	}()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	next = func(want bench.LockChangeKind) bench.LockChange {
		t.Helper()
		for {
			select {
			case c := <-changes:
				if c.Kind == bench.LockRenewed {
					continue
				}
				if c.Kind != want {
					t.Fatalf("got %+v, want a %s", c, want)
				}
				return c
			case <-ctx.Done():
				t.Fatalf("no %s reported", want)
				return bench.LockChange{}
			}
		}
	}
	return next, stop
}
