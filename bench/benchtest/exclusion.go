// Package benchtest checks implementations of the bench seam against real
// servers: mutual exclusion under concurrency, with an overlap checker.
package benchtest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// MutualExclusion runs goroutines workers that each complete cycles
// acquire → critical section → release on key through l, and fails t when
// two holders were ever inside the critical section at once, when a grant
// was lost, or when fencing tokens (if l has them) did not strictly
// increase from one holder to the next. It gives up after timeout.
func MutualExclusion(t testing.TB, l bench.Locker, key string, goroutines, cycles int, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var (
		inside, overlaps, grants atomic.Int64
		mu                       sync.Mutex // guards lastToken
		lastToken                uint64
		wg                       sync.WaitGroup
		errs                     = make(chan error, goroutines)
	)
	for range goroutines {
		wg.Go(func() {
			for range cycles {
				h, err := l.Acquire(ctx, key)
				if err != nil {
					errs <- err
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				grants.Add(1)
				if tok, ok := h.Token(); ok {
					mu.Lock()
					if tok <= lastToken {
						t.Errorf("token %d after token %d: not strictly increasing", tok, lastToken)
					}
					lastToken = tok
					mu.Unlock()
				}
				// Stay inside long enough that an overlapping holder would
				// be caught.
				time.Sleep(time.Millisecond)
				select {
				case <-h.Lost():
					t.Errorf("grant lost inside the critical section")
				default:
				}
				inside.Add(-1)
				if err := h.Release(context.Background()); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("worker: %v", err)
	}
	if n := overlaps.Load(); n > 0 {
		t.Errorf("%d overlapping grants: mutual exclusion violated", n)
	}
	if want := int64(goroutines * cycles); grants.Load() != want && !t.Failed() {
		t.Errorf("%d grants, want %d", grants.Load(), want)
	}
}
