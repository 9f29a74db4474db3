package redissonlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/redisbench"
)

// renewScript is the watchdog's renewal (RedissonBaseLock's
// renewExpiration, one lock per call): while the thread's field is in
// the hash, set the hash's TTL again. HEXISTS is run by no other script
// of these locks, so its calls count the keep-alives.
//
// KEYS[1] lock hash; ARGV[1] TTL in ms, ARGV[2] thread.
var renewScript = redis.NewScript(`
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0`)

// Unlock runs a lock's unlock script for its thread: held false when the
// thread no longer held the lock.
type Unlock func(ctx context.Context) (held bool, err error)

// Held is a granted lock kept alive by the watchdog until Release. It has
// no fencing token. Its methods are safe for concurrent use.
type Held struct {
	*redisbench.Watchdog
	unlock Unlock
}

// Hold starts the watchdog of key, granted to thread by a try sent at
// sent; Release runs unlock.
func (c *Client) Hold(key, thread string, sent time.Time, unlock Unlock) *Held {
	ttl := c.TTL.Milliseconds()
	wd := redisbench.StartWatchdog(c.TTL, sent, func(ctx context.Context) (bool, error) {
		n, err := renewScript.Run(ctx, c.Redis, []string{key}, ttl, thread).Int64()
		return err == nil && n == 1, err
	})
	return &Held{Watchdog: wd, unlock: unlock}
}

// Token implements bench.Held: Redisson's locks have none.
func (h *Held) Token() (uint64, bool) { return 0, false }

// Release stops the watchdog and runs the unlock script; it returns
// redisbench.ErrNotHeld when the lock was no longer the thread's.
func (h *Held) Release(ctx context.Context) error {
	h.Halt()
	defer h.MarkLost()
	held, err := h.unlock(ctx)
	if err != nil {
		return fmt.Errorf("redissonlock: unlock script: %w", err)
	}
	if !held {
		return redisbench.ErrNotHeld
	}
	return nil
}
