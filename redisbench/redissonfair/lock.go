// Package redissonfair is the redisson-fair contender: Redisson's fair
// lock (RedissonFairLock) reproduced in Go on go-redis against one Redis.
// Beside the lock's hash (as in redisbench/redisson) it keeps a list of
// the waiting threads in request order and a sorted set of their
// timeouts: a thread is granted only when the lock is free and it is at
// the front; the unlock message goes to the front thread's own channel;
// every script first drops waiters at the front whose timeout passed (a
// waiter that vanished holds up the queue until then). See Contender for
// the settings and what was simplified.
package redissonfair

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/internal/redissonlock"
)

// DefaultWaitTimeout is Config.WaitTimeout's default: Redisson's
// fairLockWaitTimeout (5 minutes in its Config; its documentation says a
// dead thread holds the queue for 5 seconds).
const DefaultWaitTimeout = 5 * time.Minute

// Prefixes of the names beside the lock: the queue, the timeouts and the
// threads' channels, e.g. redisson_lock_queue:{key}.
const (
	queuePrefix    = "redisson_lock_queue"
	timeoutsPrefix = "redisson_lock_timeout"
	channelPrefix  = "redisson_lock__channel"
)

// dropStale is the start of every script that reads the queue: waiters at
// the front whose timeout (the client clock's ms, as Redisson) passed are
// dropped; the others keep theirs. KEYS[2] queue, KEYS[3] timeouts; now
// is the caller's time in ms.
const dropStale = `
while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if not first then break end
  local timeout = redis.call('zscore', KEYS[3], first)
  if not timeout or tonumber(timeout) > now then break end
  redis.call('zrem', KEYS[3], first)
  redis.call('lpop', KEYS[2])
end
`

// acquireScript is RedissonFairLock's tryLockInner. After dropping stale
// waiters: a free lock goes to the thread at the front (or to anyone when
// nobody waits), which leaves the queue and moves every waiter's timeout
// one place (one wait) closer; a re-entry counts one more hold. Otherwise
// a queued thread is told to try again when the lock's TTL runs out (0
// when the lock is free: it is not this thread's turn), and a new one
// joins at the back with the timeout of the thread before it (or the
// lock's expiry) plus one wait, and is told that time. It runs EXISTS
// once per try and no other script does (the attempts counter).
//
// KEYS[1] lock hash, KEYS[2] queue, KEYS[3] timeouts; ARGV[1] TTL in ms,
// ARGV[2] thread, ARGV[3] wait in ms, ARGV[4] now in ms. Returns nil when
// granted, else ms to wait.
var acquireScript = redis.NewScript(`
local now = tonumber(ARGV[4])
local wait = tonumber(ARGV[3])` + dropStale + `
if redis.call('exists', KEYS[1]) == 0 then
  local first = redis.call('lindex', KEYS[2], 0)
  if not first or first == ARGV[2] then
    if first then
      redis.call('lpop', KEYS[2])
      redis.call('zrem', KEYS[3], ARGV[2])
    end
    local waiting = redis.call('zrange', KEYS[3], 0, -1)
    for i = 1, #waiting do
      redis.call('zincrby', KEYS[3], -wait, waiting[i])
    end
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
  end
elseif redis.call('hget', KEYS[1], ARGV[2]) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('zscore', KEYS[3], ARGV[2]) then
  return math.max(0, redis.call('pttl', KEYS[1]))
end
local last = redis.call('lindex', KEYS[2], -1)
local before = last and last ~= ARGV[2] and redis.call('zscore', KEYS[3], last)
local ttl
if before then
  ttl = tonumber(before) - now
else
  ttl = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ttl + wait + now, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl`)

// unlockScript is RedissonFairLock's unlockInner. After dropping stale
// waiters: one hold less; at zero the lock is deleted and the unlock
// message published on the channel of the thread at the front. A thread
// that no longer holds the lock still wakes the front one if the lock is
// free (it expired), so that the queue moves on.
//
// KEYS[1] lock hash, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] channel
// prefix; ARGV[1] message, ARGV[2] TTL in ms, ARGV[3] thread, ARGV[4] now
// in ms. Returns nil when the thread did not hold the lock, 0 when it
// still holds it (re-entered), 1 when the lock was deleted.
var unlockScript = redis.NewScript(`
local now = tonumber(ARGV[4])` + dropStale + `
if not redis.call('hget', KEYS[1], ARGV[3]) then
  if redis.call('hlen', KEYS[1]) == 0 then
    local next = redis.call('lindex', KEYS[2], 0)
    if next then redis.call('publish', KEYS[4] .. ':' .. next, ARGV[1]) end
  end
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
local next = redis.call('lindex', KEYS[2], 0)
if next then redis.call('publish', KEYS[4] .. ':' .. next, ARGV[1]) end
return 1`)

// leaveScript is RedissonFairLock's acquireFailed: the thread leaves the
// queue and every waiter behind it moves one place (one wait) closer.
//
// KEYS[1] queue, KEYS[2] timeouts; ARGV[1] thread, ARGV[2] wait in ms.
var leaveScript = redis.NewScript(`
local queue = redis.call('lrange', KEYS[1], 0, -1)
local behind = false
for i = 1, #queue do
  if behind then
    redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), queue[i])
  elseif queue[i] == ARGV[1] then
    behind = true
  end
end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])`)

// DefaultKeyPrefix is the default KeyPrefix: the other Redis contenders on
// the same server use other keys.
const DefaultKeyPrefix = redisbench.DefaultKeyPrefix + "redisson-fair:"

// Config configures a Locker.
type Config struct {
	// Config is the Redis, the TTL (= lease), the pool, the key prefix
	// (default DefaultKeyPrefix), the timeouts and the dialer, as for
	// redisbench/redisson.
	redissonlock.Config
	// WaitTimeout is how long a waiter keeps its place beyond the time
	// the waiter before it should have been served (Redisson's
	// fairLockWaitTimeout, threadWaitTime); default DefaultWaitTimeout.
	WaitTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.WaitTimeout <= 0 {
		c.WaitTimeout = DefaultWaitTimeout
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	return c
}

// Locker is one Redisson client's fair lock on one Redis; each Acquire is
// a thread of its own. It implements bench.Locker and is safe for
// concurrent use.
type Locker struct {
	c    *redissonlock.Client
	wait int64 // WaitTimeout in ms
}

// New returns a Locker; it does not connect until first use.
func New(cfg Config) (*Locker, error) {
	cfg = cfg.withDefaults()
	c, err := redissonlock.NewClient(cfg.Config)
	if err != nil {
		return nil, err
	}
	return &Locker{c: c, wait: cfg.WaitTimeout.Milliseconds()}, nil
}

// Acquire implements bench.Locker: Redisson's lock() on the fair lock for
// a new thread. When ctx ends first the thread leaves the queue (as
// Redisson's tryLock does when its wait runs out). It never gives up on
// its own.
func (l *Locker) Acquire(ctx context.Context, key string) (bench.Held, error) {
	name := l.c.Prefix + key
	channels := redissonlock.Name(channelPrefix, name)
	// The lock, the queue, the timeouts; the unlock script also names the
	// channels' prefix.
	unlockKeys := []string{name, redissonlock.Name(queuePrefix, name), redissonlock.Name(timeoutsPrefix, name), channels}
	keys := unlockKeys[:3]
	thread := l.c.Thread()
	ttl := l.c.TTL.Milliseconds()
	unlock := func(ctx context.Context) (bool, error) {
		err := unlockScript.Run(ctx, l.c.Redis, unlockKeys, redissonlock.UnlockMessage, ttl, thread, time.Now().UnixMilli()).Err()
		if errors.Is(err, redis.Nil) {
			return false, nil
		}
		return err == nil, err
	}
	sent, err := l.c.Acquire(ctx, redissonlock.Attempt{
		Channel: channels + ":" + thread,
		Try: func(ctx context.Context) (bool, time.Duration, error) {
			left, err := acquireScript.Run(ctx, l.c.Redis, keys, ttl, thread, l.wait, time.Now().UnixMilli()).Int64()
			if errors.Is(err, redis.Nil) {
				return true, 0, nil
			}
			return false, time.Duration(left) * time.Millisecond, err
		},
		Undo: func(ctx context.Context) error {
			_, err := unlock(ctx)
			return err
		},
		Leave: func(ctx context.Context) error {
			err := leaveScript.Run(ctx, l.c.Redis, keys[1:], thread, l.wait).Err()
			if errors.Is(err, redis.Nil) {
				return nil
			}
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	return l.c.Hold(name, thread, sent, unlock), nil
}

// Close implements bench.Locker.
func (l *Locker) Close() error { return l.c.Close() }
