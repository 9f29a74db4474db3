package redissonfair

import (
	"context"
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/internal/redissonlock"
)

// Name is the contender id.
const Name = "redisson-fair"

// Contender returns the redisson-fair row of the contender table:
// Redisson's fair lock on the single Redis the redis contender uses (the
// same server).
func Contender() bench.Contender {
	return bench.Contender{
		Name: Name, Label: "Redisson fair lock", Family: "redis", Colour: "#a6761d",
		Server:   redisbench.Server,
		Settings: Settings(),
		New: func(_ context.Context, addrs []string, lease time.Duration, o bench.OpenOptions) (bench.Locker, error) {
			return New(Config{Config: redissonlock.Config{Addr: addrs[0], TTL: lease, Dialer: o.Dialer, SeparateClients: o.SeparateClients}})
		},
		Dials:    true,
		Counters: redissonlock.NewCounters,
		// The lock is the hash at the prefix + the key, as the lock's
		// scripts name it; the queue and timeouts beside it are not watched.
		WatchLock:       redisbench.LockWatch(DefaultKeyPrefix),
		WatchLockSource: redisbench.WatchSource,
		Claims:          results.OfKind(results.ClaimOther, Claims()),
		Notes:           Notes(),
		Caps:            append(slices.Clone(redissonlock.Caps), Caps...),
		WaitRetry:       redissonlock.WaitRetry,
	}
}

// Caps are the fair lock's own caps, beside redisson's, for the suite's
// time budget: after a crash, a freeze, a pause, a clock jump or a server
// restart the fair lock waits for the key's TTL like redisson's, which
// the quick suite measures; its own figures (the graceful handover, FIFO
// order, the queue's load) run, and the full run measures the rest but
// safety, where it measured redisson's figures.
var Caps = []bench.Cap{
	{Scenario: "handover", Variant: "crash", QuickOnly: true, Reason: "quick: TTL-bound like redisson's (the full run measures it)"},
	{Scenario: "handover", Variant: "freeze", QuickOnly: true, Reason: "quick: TTL-bound like redisson's (the full run measures it)"},
	{Scenario: "safety", Variant: "*", Reason: "the lease and the server decide, as for redisson: the same watchdog keeps the key (in the full run 20261203T151155Z every safety figure was redisson's, the learn-first margins within 2 ms)"},
	{Scenario: "failover", Variant: "*", QuickOnly: true, Reason: "quick: the same Redis restart as redisson's (the full run measures it)"},
	{Scenario: "chaos", Variant: "*", QuickOnly: true, Reason: "quick: the same faults on the same Redis, TTL-bound like redisson's (8.4 s in quick run 20261207T091920Z, which ran 1.6 min over its 6; the full run measures it)"},
}

// Settings describes the fair lock for results.json: what both Redisson
// locks share (with what the reproduction simplifies) and this lock's
// queue and scripts.
func Settings() results.Settings {
	s := Config{}.withDefaults().Config.Settings()
	s["queue"] = "list redisson_lock_queue:{key} of the waiting threads in request order, sorted set redisson_lock_timeout:{key} of their timeouts (ms on the client's wall clock, as Redisson passes System.currentTimeMillis)"
	s["wait_timeout"] = DefaultWaitTimeout.String() + " (Redisson's fairLockWaitTimeout default in its code; its documentation says 5 seconds): a thread keeps its place until the thread before it should have been served plus this; every grant moves every waiter's timeout one wait closer"
	s["stale_waiters"] = "every script first drops the threads at the front of the queue whose timeout passed: a waiter that vanished holds the queue until then"
	s["acquire"] = "one Lua script (tryLockInner): drop stale waiters; EXISTS key; free and the thread at the front (or nobody waiting) → leave the queue, ZINCRBY -wait every waiter's timeout, HINCRBY field 1, PEXPIRE ttl, nil (granted); the thread's field present → re-entry; queued already → the lock's remaining TTL, 0 when it is free but not this thread's turn; else join at the back (ZADD timeout, RPUSH) and return the time until the thread before it times out"
	s["release"] = "one Lua script (unlockInner): drop stale waiters; the thread's field absent → nil (ErrNotHeld), still waking the front thread if the lock is free (Redisson's script answers 1 for a lock that no longer exists and nil for one another thread holds: the bench reports both as not held); HINCRBY field -1; above 0 → PEXPIRE ttl; else DEL and PUBLISH 0 on redisson_lock__channel:{key}:<front thread>"
	s["wake_up"] = "each waiting thread subscribes to its own channel redisson_lock__channel:{key}:<thread>; a release wakes the front thread only"
	s["give_up_cleanup"] = "when ctx ends before the grant, the thread leaves the queue and moves everyone behind it one wait closer (Redisson's acquireFailed, run by tryLock when its wait runs out; lock() leaves a dead thread to time out)"
	s["fair"] = "yes: a free lock goes only to the thread at the front of the queue"
	return s
}

// Notes are trade-offs of the fair lock that a run does not measure.
func Notes() []string {
	return []string{
		"Redisson's fair lock is reproduced in Go (go-redis): the scripts, the queue, the timeouts and the per-thread channels follow Redisson's source (RedissonFairLock); the Java client itself is not measured. Simplifications are listed in the contender's settings (simplified, give_up_cleanup).",
		"Every grant and every waiter that gives up rewrites the timeout of every waiter behind (ZINCRBY per waiter, inside the script): the server's work per grant grows with the queue.",
		"A waiter that vanished without leaving (its process killed) keeps its place until its timeout, 5 minutes by default; meanwhile the threads behind it, told 0 ms while the lock is free, try again at once (Redisson's script returns max(0, PTTL)). Waiter timeouts run on the clients' wall clocks.",
		"No fencing token, as Redisson's lock.",
	}
}
