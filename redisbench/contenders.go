package redisbench

import (
	"context"
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
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
	c := redisContender("redis-spin", SpinWait, TokenNone, true, "#2e8b57")
	c.Caps = SpinCaps
	return c
}

// SpinCaps are the variants the fast-spin contenders do not run, for the
// suite's time budget: where their wait is the base contender's within one
// retry delay, and in quick runs where the full run measures them.
var SpinCaps = []bench.Cap{
	{Scenario: "handover", Variant: "crash", Reason: "the waiter gets the lock when the key expires (TTL-bound, 24 s per repetition): spin differs from its base contender only by the retry delay after expiry, which graceful measures"},
	{Scenario: "handover", Variant: "freeze", Reason: "TTL-bound like crash: spin differs from its base contender only by the retry delay, which graceful measures"},
	{Scenario: "handover", Variant: "host-loss", Reason: "TTL-bound like crash: spin differs from its base contender only by the retry delay, which graceful measures"},
	{Scenario: "handover", Variant: "*", QuickOnly: true, Reason: "quick: the full run measures the waiting strategy's handover"},
	{Scenario: "scale", Variant: "*", QuickOnly: true, Reason: "quick: the full run measures the polling load of a spinning queue"},
}

// RedlockContender returns the redlock contender: redsync over the Masters.
func RedlockContender() bench.Contender {
	c := redlockContender("redlock", JitterWait, Timeouts{}, false, "#e08a00")
	c.Caps = RedlockCaps
	return c
}

// RedlockCaps are the variants redlock does not run, for the suite's time
// budget (measured in the full run 20261201T002715Z).
var RedlockCaps = []bench.Cap{
	{Scenario: "scale", Variant: "idle-max-lease2s", Reason: "redlock already lost most sessions at 10k with the 2s lease (idle-10k-lease2s: 4,303 of 10,000 held); idle-max-lease2s took it 62 s"},
	{Scenario: "scale", Variant: "idle-10k", QuickOnly: true, Reason: "quick: the full run measures redlock's 10k idle sessions"},
}

// RedlockSpinContender returns redlock-spin: Redlock with the fast-spin retry
// delay.
func RedlockSpinContender() bench.Contender {
	c := redlockContender("redlock-spin", SpinWait, Timeouts{}, true, "#7b3fa0")
	c.Caps = RedlockSpinCaps
	return c
}

// RedlockSpinCaps are SpinCaps and a scale variant Redlock cannot serve
// spinning.
var RedlockSpinCaps = append(slices.Clone(SpinCaps),
	bench.Cap{Scenario: "scale", Variant: "queue-10k", Reason: "10,000 waiters spinning on 5 masters saturated them: no promotion was sampled (0.65 tries per waiter per lease, full run 20261203T151155Z, 28 s); queue-1k shows its polling load"})

// FastTimeout is redlock-fast's per-master dial, read and write timeout:
// a few round trips on a LAN, not redlock's DefaultDialTimeout and
// DefaultIOTimeout (1s each).
const FastTimeout = 50 * time.Millisecond

// FastTimeouts are redlock-fast's connection settings: FastTimeout for
// every dial, read and write, and one dial attempt per command.
var FastTimeouts = Timeouts{Dial: FastTimeout, Read: FastTimeout, Write: FastTimeout, DialAttempts: 1}

// RedlockFastContender returns redlock-fast: the redlock contender with
// FastTimeouts. redsync bounds a lock try by timeout_factor × ttl, but its
// Unlock and Extend wait for every master's answer, and go-redis dials a
// master that is down 5 times 100ms apart before it fails a command: with
// two masters down every release waited 400ms (measured, local backend)
// and every try its whole timeout_factor × ttl. This row shows Redlock as
// a careful operator would configure it for masters that go down; it
// takes part in the failover scenario only (budget).
func RedlockFastContender() bench.Contender {
	c := redlockContender("redlock-fast", JitterWait, FastTimeouts, false, "#d4a017")
	c.Scenarios = []string{"failover"}
	c.Caps = []bench.Cap{{Scenario: "failover", Variant: "restart-*", QuickOnly: true, Reason: "quick: redlock measures the split variants (a master restarting without its data); the full run measures them with fast timeouts too"}}
	c.Settings["variant"] = "redlock with per-master dial, read and write timeouts of " + FastTimeout.String() + " (a few round trips) instead of 1s and one dial attempt per command instead of go-redis's 5 (100ms apart), so that masters that are down cost a try, an Unlock or an Extend a refused dial or " + FastTimeout.String() + ", not 400ms or more; failover scenario only (budget)"
	return c
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
		New: func(_ context.Context, addrs []string, lease time.Duration, o bench.OpenOptions) (bench.Locker, error) {
			return NewRedis(Config{Addr: addrs[0], TTL: lease, Wait: wait, Token: token, Dialer: o.Dialer})
		},
		Dials:           true,
		Counters:        NewCounters,
		WatchLock:       LockWatch(DefaultKeyPrefix),
		WatchLockSource: WatchSource,
		Claims:          results.OfKind(results.ClaimOther, claimsAbout(name)),
	}
}

func redlockContender(name string, wait Wait, timeouts Timeouts, contendedOnly bool, colour string) bench.Contender {
	return bench.Contender{
		Name: name, Label: name, Family: "redis", Colour: colour,
		Server: RedlockMasters, ContendedOnly: contendedOnly,
		Settings: withCounters(RedlockConfig{Wait: wait, Timeouts: timeouts}.Settings()),
		New: func(_ context.Context, addrs []string, lease time.Duration, o bench.OpenOptions) (bench.Locker, error) {
			return NewRedlock(RedlockConfig{Addrs: addrs, TTL: lease, Wait: wait, Timeouts: timeouts, Dialer: o.Dialer})
		},
		Dials:           true,
		Counters:        NewCounters,
		WatchLock:       LockWatch(DefaultKeyPrefix),
		WatchLockSource: WatchSource,
		Claims:          results.OfKind(results.ClaimOther, claimsAbout(name)),
	}
}

// WatchdogIdleCaps are the variants the Redisson locks do not run, for the
// suite's time budget: an idle held lock costs what the redis contender's
// does (the same watchdog: one PEXPIRE per held lock every TTL/3 on the
// same Redis), which the scale scenario measures; the queue variants stay.
var WatchdogIdleCaps = []bench.Cap{
	{Scenario: "scale", Variant: "idle-*", Reason: "an idle Redisson lock is the redis contender's keep-alive (the same watchdog: one PEXPIRE per held lock every TTL/3, on the same Redis): its idle figures are redis's"},
}

func withCounters(s results.Settings) results.Settings {
	s["counters"] = countersSource
	s["persistence"] = Persistence
	return s
}

// Persistence states what serverArgs give every Redis: a restarted server
// comes back empty (the failover scenario's restart-unsafe relies on it).
const Persistence = `none (--save "" --appendonly no): a restarted server has lost every key`
