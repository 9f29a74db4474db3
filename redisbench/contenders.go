package redisbench

import (
	"context"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/output/results"
)

// Rows of the contender table. The -spin rows are the "fast spin" waiting
// strategy reported beside the default (redsync's jitter); they only run
// where workers contend.

// RedisContender returns the redis contender: SET NX on one Redis, redsync's
// jittered retry delay.
func RedisContender() bench.Contender {
	return redisContender("redis", JitterWait, TokenNone, false, "#c8322d")
}

// RedisSpinContender returns redis-spin: Redis with the fast-spin retry delay.
func RedisSpinContender() bench.Contender {
	return redisContender("redis-spin", SpinWait, TokenNone, true, "#2e8b57")
}

// RedlockContender returns the redlock contender: redsync over the Masters.
func RedlockContender() bench.Contender {
	return redlockContender("redlock", JitterWait, false, "#e08a00")
}

// RedlockSpinContender returns redlock-spin: Redlock with the fast-spin retry
// delay.
func RedlockSpinContender() bench.Contender {
	return redlockContender("redlock-spin", SpinWait, true, "#7b3fa0")
}

// RedisIncrContender returns redis-incr: the redis contender with a
// fencing token from INCR on the same Redis at acquire (TokenIncr), the
// best a careful user can add. It takes part in the safety scenario only,
// where tokens matter.
func RedisIncrContender() bench.Contender {
	c := redisContender("redis-incr", JitterWait, TokenIncr, false, "#8c564b")
	c.Scenarios = []string{"safety"}
	return c
}

func redisContender(name string, wait Wait, token string, contendedOnly bool, colour string) bench.Contender {
	return bench.Contender{
		Name: name, Label: name, Family: "redis", Colour: colour,
		Server: Server, ContendedOnly: contendedOnly,
		Settings: withCounters(Config{Wait: wait, Token: token}.Settings()),
		Open: func(_ context.Context, addrs []string, lease time.Duration) (bench.Locker, error) {
			return NewRedis(Config{Addr: addrs[0], TTL: lease, Wait: wait, Token: token})
		},
		OpenWith: func(_ context.Context, addrs []string, lease time.Duration, o bench.OpenOptions) (bench.Locker, error) {
			return NewRedis(Config{Addr: addrs[0], TTL: lease, Wait: wait, Dialer: o.Dialer})
		},
		Counters: NewCounters,
		Claims:   results.OfKind(results.ClaimOther, claimsAbout(name)),
	}
}

func redlockContender(name string, wait Wait, contendedOnly bool, colour string) bench.Contender {
	return bench.Contender{
		Name: name, Label: name, Family: "redis", Colour: colour,
		Server: RedlockMasters, ContendedOnly: contendedOnly,
		Settings: withCounters(RedlockConfig{Wait: wait}.Settings()),
		Open: func(_ context.Context, addrs []string, lease time.Duration) (bench.Locker, error) {
			return NewRedlock(RedlockConfig{Addrs: addrs, TTL: lease, Wait: wait})
		},
		OpenWith: func(_ context.Context, addrs []string, lease time.Duration, o bench.OpenOptions) (bench.Locker, error) {
			return NewRedlock(RedlockConfig{Addrs: addrs, TTL: lease, Wait: wait, Dialer: o.Dialer})
		},
		Counters: NewCounters,
		Claims:   results.OfKind(results.ClaimOther, claimsAbout(name)),
	}
}

func withCounters(s results.Settings) results.Settings {
	s["counters"] = countersSource
	s["persistence"] = Persistence
	return s
}

// Persistence states what serverArgs give every Redis: a restarted server
// comes back empty (the failover scenario's restart-unsafe relies on it).
const Persistence = `none (--save "" --appendonly no): a restarted server has lost every key`
