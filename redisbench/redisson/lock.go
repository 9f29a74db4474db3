// Package redisson is the redisson contender: Redisson's lock (RLock)
// reproduced in Go on go-redis against one Redis. The lock is a hash
// whose field <client id>:<thread id> counts the holder's re-entries,
// with the TTL on the hash; one script acquires it or answers the
// remaining TTL; a refused thread subscribes to the lock's channel and
// tries again on the unlock message or when that TTL has passed; the
// unlock script decrements, deletes and publishes; a watchdog renews the
// TTL every ttl/3. See Contender for the settings and what was
// simplified.
//
// The lock is not fair: an unlock message wakes one waiting thread of
// every subscribed client, and whoever tries first wins, so grants do not
// follow request order (redisbench/redissonfair is the fair lock).
package redisson

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/internal/redissonlock"
)

// channelPrefix names the lock's channel, redisson_lock__channel:{key}.
const channelPrefix = "redisson_lock__channel"

// acquireScript is RedissonLock's tryLockInner: a free lock, or one this
// thread holds already (a re-entry), counts one more hold and gets the
// TTL; a taken one answers its remaining TTL. It runs EXISTS once per try
// and no other script does (the attempts counter).
//
// KEYS[1] lock hash; ARGV[1] TTL in ms, ARGV[2] thread. Returns nil when
// granted, else the PTTL in ms.
var acquireScript = redis.NewScript(`
if redis.call('exists', KEYS[1]) == 0 or redis.call('hget', KEYS[1], ARGV[2]) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])`)

// unlockScript is RedissonLock's unlockInner: one hold less; at zero the
// lock is deleted and the unlock message published to its channel.
//
// KEYS[1] lock hash, KEYS[2] channel; ARGV[1] thread, ARGV[2] TTL in ms,
// ARGV[3] message. Returns nil when the thread did not hold the lock, 0
// when it still holds it (re-entered), 1 when the lock was deleted.
var unlockScript = redis.NewScript(`
if not redis.call('hget', KEYS[1], ARGV[1]) then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[3])
return 1`)

// Config configures a Locker: the Redis, the TTL (= lease), the pool, the
// key prefix (default DefaultKeyPrefix), the timeouts and the dialer.
type Config = redissonlock.Config

// DefaultKeyPrefix is the default Config.KeyPrefix: the other Redis
// contenders on the same server use other keys (the redis contender's
// strings under the same names would be the wrong type here).
const DefaultKeyPrefix = redisbench.DefaultKeyPrefix + "redisson:"

// Locker is one Redisson client's lock on one Redis; each Acquire is a
// thread of its own. It implements bench.Locker and is safe for
// concurrent use.
type Locker struct{ c *redissonlock.Client }

// New returns a Locker; it does not connect until first use.
func New(cfg Config) (*Locker, error) {
	if cfg.KeyPrefix == "" {
		cfg.KeyPrefix = DefaultKeyPrefix
	}
	c, err := redissonlock.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Locker{c: c}, nil
}

// Acquire implements bench.Locker: Redisson's lock() for a new thread. It
// never gives up on its own.
func (l *Locker) Acquire(ctx context.Context, key string) (bench.Held, error) {
	name := l.c.Prefix + key
	channel := redissonlock.Name(channelPrefix, name)
	thread := l.c.Thread()
	ttl := l.c.TTL.Milliseconds()
	unlock := func(ctx context.Context) (bool, error) {
		err := unlockScript.Run(ctx, l.c.Redis, []string{name, channel}, thread, ttl, redissonlock.UnlockMessage).Err()
		if errors.Is(err, redis.Nil) {
			return false, nil
		}
		return err == nil, err
	}
	sent, err := l.c.Acquire(ctx, redissonlock.Attempt{
		Channel: channel,
		Try: func(ctx context.Context) (bool, time.Duration, error) {
			left, err := acquireScript.Run(ctx, l.c.Redis, []string{name}, ttl, thread).Int64()
			if errors.Is(err, redis.Nil) {
				return true, 0, nil
			}
			return false, time.Duration(left) * time.Millisecond, err
		},
		Undo: func(ctx context.Context) error {
			_, err := unlock(ctx)
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
