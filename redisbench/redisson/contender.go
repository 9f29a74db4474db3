package redisson

import (
	"context"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/internal/redissonlock"
)

// Name is the contender id.
const Name = "redisson"

// Contender returns the redisson row of the contender table: Redisson's
// lock on the single Redis the redis contender uses (the same server).
func Contender() bench.Contender {
	return bench.Contender{
		Name: Name, Label: "Redisson lock (RLock)", Family: "redis", Colour: "#e7298a",
		Server:   redisbench.Server,
		Settings: Settings(),
		New: func(_ context.Context, addrs []string, lease time.Duration, o bench.OpenOptions) (bench.Locker, error) {
			return New(Config{Addr: addrs[0], TTL: lease, Dialer: o.Dialer, SeparateClients: o.SeparateClients})
		},
		Dials:    true,
		Counters: redissonlock.NewCounters,
		// The lock is the hash at the prefix + the key, as the lock's
		// scripts name it; the queue and timeouts beside it are not watched.
		WatchLock:       redisbench.LockWatch(DefaultKeyPrefix),
		WatchLockSource: redisbench.WatchSource,
		Claims:          results.OfKind(results.ClaimOther, Claims()),
		Notes:           Notes(),
		Caps:            redissonlock.Caps,
		WaitRetry:       redissonlock.WaitRetry,
	}
}

// Settings describes the lock for results.json: what both Redisson locks
// share (with what the reproduction simplifies) and this lock's scripts.
func Settings() results.Settings {
	s := Config{KeyPrefix: DefaultKeyPrefix}.Settings()
	s["acquire"] = "one Lua script (tryLockInner): EXISTS key; free, or the thread's field present (HGET) → HINCRBY field 1, PEXPIRE ttl, nil (granted); else PTTL (the remaining TTL)"
	s["release"] = "one Lua script (unlockInner): the thread's field absent → nil (ErrNotHeld); HINCRBY field -1; above 0 → PEXPIRE ttl; else DEL and PUBLISH 0 on redisson_lock__channel:{key}"
	s["fair"] = "no: an unlock message wakes one waiting thread of every subscribed client and the first try wins, so grants do not follow request order"
	return s
}

// Notes are trade-offs of the lock that a run does not measure.
func Notes() []string {
	return []string{
		"Redisson's lock is reproduced in Go (go-redis): the scripts, the channel scheme and the wait loop follow Redisson's source (RedissonLock, LockPubSub); the Java client itself, its thread model and its connection pools are not measured. Simplifications are listed in the contender's settings (simplified).",
		"Not fair: on release every client with a waiting thread is woken and the first try wins; each waiter also tries again when the remaining TTL it was told has passed, so waiting costs one try per waiter per ⅔–1 TTL while the watchdog keeps the lock.",
		"No fencing token: a holder paused past its TTL can write after the next grant, as with SET NX. Redisson's RFencedLock adds a token (an INCR in the acquire script); it is not measured here.",
	}
}
