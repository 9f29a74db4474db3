package monolock

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// DoRetry's backoff between attempts: exponential from backoffMin to
// backoffMax, each delay drawn uniformly from [d/2, d].
const (
	backoffMin = 100 * time.Millisecond
	backoffMax = 5 * time.Second
)

// Do acquires the lock name (see Acquire), calls fn with the fencing token
// and releases the lock when fn returns or panics (a panic is re-raised
// after the release).
//
// Cancelling ctx while queued makes Do return ctx.Err() at once. Once fn
// runs, cancelling ctx only cancels fn's context to ask fn to stop; the
// lock keeps heartbeating until fn returns, and that is not a loss.
//
// fn's context is also cancelled the moment ownership is no longer
// confirmed; context.Cause then reports why. If ownership was lost while fn
// ran, the cause is joined into Do's result even when fn returned nil:
// the work may not have been exclusive.
//
// Before fn runs, Do makes exactly one attempt and returns exactly the
// error that occurred, as Acquire does: a dial or connection error
// unchanged, a *ServerError, a validation error of package protocol, or an
// error wrapping ErrInvalidConfig.
func (c *Client) Do(ctx context.Context, name string, lease time.Duration, fn func(ctx context.Context, token uint64) error) error {
	_, err := c.do(ctx, name, lease, fn)
	return err
}

// do is Do, also reporting whether fn was called.
func (c *Client) do(ctx context.Context, name string, lease time.Duration, fn func(ctx context.Context, token uint64) error) (ran bool, err error) {
	l, err := c.Acquire(ctx, name, lease)
	if err != nil {
		return false, err
	}
	fnCtx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(l.ctx, func() { cancel(l.Err()) })
	returned := false
	defer func() {
		if !returned { // fn panicked or called runtime.Goexit
			stop()
			cancel(nil)
			l.Release()
		}
	}()
	fnErr := fn(fnCtx, l.Token())
	returned = true
	stop()
	cancel(nil)
	lost := l.Err() // set before fn returned, or just now; either way not confirmed through fn
	l.Release()
	return true, errors.Join(fnErr, lost)
}

// DoRetry is Do with retries of transient failures before fn runs: dial
// errors, a lost connection or heartbeat timeout while queued, and server
// conditions (ERROR codes below 0x10). It waits between attempts with
// exponential backoff from 100ms to 5s, each delay drawn from [d/2, d];
// after 0x01 (server shutting down) it retries at once, unless the previous
// retry already was immediate. It gives up when ctx ends and returns
// ctx.Err() unchanged. Client errors (codes from 0x10, invalid arguments,
// protocol violations) are returned at once.
//
// fn is called at most once: once it has run, its result (joined with a
// loss, as in Do) is returned without retrying.
func (c *Client) DoRetry(ctx context.Context, name string, lease time.Duration, fn func(ctx context.Context, token uint64) error) error {
	if err := c.validate(name, lease); err != nil {
		return err
	}
	delay := backoffMin
	atOnce := false // the previous retry was immediate
	for {
		ran, err := c.do(ctx, name, lease, fn)
		if err == nil || ran || !retryable(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, protocol.ErrShuttingDown) && !atOnce {
			atOnce = true
			continue // the server asked us to reconnect; a successor may be up
		}
		atOnce = false
		t := time.NewTimer(delay/2 + rand.N(delay/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, backoffMax)
	}
}

// retryable reports whether an Acquire failure is transient.
func retryable(err error) bool {
	var se *ServerError
	if errors.As(err, &se) {
		return se.Temporary()
	}
	if errors.Is(err, ErrProtocolViolation) || errors.Is(err, ErrInvalidConfig) {
		return false
	}
	var pe *protocol.Error
	if errors.As(err, &pe) { // validation
		return false
	}
	return true // dial and connection errors, ErrHeartbeatTimeout
}
