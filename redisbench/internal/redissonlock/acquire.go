package redissonlock

import (
	"context"
	"fmt"
	"time"
)

// undoTimeout bounds the scripts that clean up after an Acquire that
// ended without a grant.
const undoTimeout = 5 * time.Second

// Attempt is one thread's acquisition of one lock: the lock's scripts as
// the wait loop runs them.
type Attempt struct {
	// Channel is the channel the lock's unlock message for this thread is
	// published on.
	Channel string
	// Try runs the acquire script once: granted, or the remaining TTL to
	// wait before the next try when no message comes (negative: wait for
	// a message only).
	Try func(ctx context.Context) (granted bool, ttl time.Duration, err error)
	// Undo releases the lock if a try that ctx cut short granted it after
	// all (the answer was lost, not the grant).
	Undo func(ctx context.Context) error
	// Leave, when set, runs whenever Acquire returns without the lock
	// after a refused try (the fair lock leaves its queue, as Redisson's
	// acquireFailed does when a tryLock's wait runs out).
	Leave func(ctx context.Context) error
}

// Acquire runs Redisson's lock(): a try; when refused, subscribe to the
// channel, then try again and wait for an unlock message or the remaining
// TTL, until granted or ctx ends. After the first try in vain once
// subscribed, the thread sends one PING on the subscription connection:
// the server's count of them is the waiting counter (see CountersSource). It returns when the granting try was
// sent (the TTL runs from no earlier than that).
func (c *Client) Acquire(ctx context.Context, a Attempt) (time.Time, error) {
	sent := time.Now()
	granted, ttl, err := c.try(ctx, a)
	if granted || err != nil {
		return sent, err
	}
	pubsub, done := c.subscriptions()
	defer done()
	sub, err := pubsub.subscribe(a.Channel)
	if err != nil {
		c.leave(ctx, a)
		return time.Time{}, err
	}
	defer sub.close()
	bound := c.TTL
	if ttl > 0 && ttl < bound {
		bound = ttl
	}
	if err := sub.await(ctx, bound); err != nil {
		c.leave(ctx, a)
		if ctx.Err() != nil {
			// The SUBSCRIBE (or its connection's dial) failed because
			// ctx ended: report that, as every other step does.
			return time.Time{}, ctx.Err()
		}
		return time.Time{}, err
	}
	for waiting := false; ; waiting = true {
		sent = time.Now()
		granted, ttl, err = c.try(ctx, a)
		if granted || err != nil {
			return sent, err
		}
		if !waiting {
			// From now on the thread only waits: let the server count it.
			pubsub.ping(ctx)
		}
		if err := sub.wait(ctx, ttl); err != nil {
			c.leave(ctx, a)
			return time.Time{}, err
		}
	}
}

// try runs one try. When it failed or ctx ended during it, the lock may
// have been granted all the same (the answer was lost, not the grant):
// undo that and leave before returning the error.
func (c *Client) try(ctx context.Context, a Attempt) (bool, time.Duration, error) {
	granted, ttl, err := a.Try(ctx)
	if ctx.Err() == nil && err == nil {
		return granted, ttl, nil
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	_ = a.Undo(uctx)
	c.leave(uctx, a)
	if ctx.Err() != nil {
		return false, 0, ctx.Err()
	}
	return false, 0, fmt.Errorf("redissonlock: acquire script: %w", err)
}

// leave runs a.Leave, if any, bounded by undoTimeout even after ctx ended.
func (c *Client) leave(ctx context.Context, a Attempt) {
	if a.Leave == nil {
		return
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	_ = a.Leave(lctx)
}
