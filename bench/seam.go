package bench

import (
	"context"
	"errors"
	"time"
)

// Locker is one lock implementation under test. A Locker is opened once per
// measured run and shared by all workers: Acquire must be safe for
// concurrent use.
type Locker interface {
	// Acquire blocks until key is held, ctx ends (return ctx.Err()), or the
	// implementation gives up (return an error wrapping ErrGaveUp).
	Acquire(ctx context.Context, key string) (Held, error)
	// Close releases every resource of the Locker (pools, watchdogs).
	Close() error
}

// Held is one held lock. Its methods are safe for concurrent use.
type Held interface {
	// Token returns the fencing token of the grant, if the implementation
	// has one.
	Token() (uint64, bool)
	// Lost is closed when the implementation stops being sure it still
	// holds the lock (lease lost, watchdog failed), and after Release. A
	// baseline that locks nothing (a floor) may never close it.
	Lost() <-chan struct{}
	// Release gives the lock back.
	Release(ctx context.Context) error
}

// ErrGaveUp is wrapped by Acquire errors of implementations that stop
// waiting on their own (a retry budget ran out) although ctx was still
// live. The harness counts them as failures, never as silence.
var ErrGaveUp = errors.New("bench: gave up waiting for the lock")

// Sleep waits d or until ctx ends, and then returns ctx.Err(): how a
// Locker that polls waits between tries, and how the load generator, the
// fault tools and the scenarios pace themselves.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
