// Package redissonlock is what Redisson's lock (RLock) and fair lock
// share, reproduced in Go on go-redis for the redisson and redissonfair
// contenders: a client with its own id, a connection pool and one
// subscription connection (Client); the wake-up by unlock message
// (Redisson's LockPubSub: one entry per channel, shared by the client's
// waiting threads, one of them woken per message); the wait loop of
// RedissonLock.lock() (Client.Acquire); the held lock kept alive by the
// watchdog (Held); and the coordinator counters (NewCounters).
//
// The lock scripts themselves belong to each contender: an Attempt
// carries them into the wait loop.
package redissonlock

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/redisbench"
)

// Config configures a Client.
type Config struct {
	// Addr is the Redis host:port.
	Addr string
	// TTL is the lock's time to live, Redisson's lockWatchdogTimeout
	// (default 30s there). Required: parity with the monolock lease.
	TTL time.Duration
	// PoolSize is the command connection pool's size; default
	// redisbench.DefaultPoolSize. The subscription connection comes on
	// top of it.
	PoolSize int
	// KeyPrefix is put before every lock key. The contender packages
	// default it to a prefix of their own (their DefaultKeyPrefix), so
	// that contenders sharing the server never share a key.
	KeyPrefix string
	// Timeouts are the connection timeouts; zero fields take
	// redisbench's defaults.
	Timeouts redisbench.Timeouts
	// Dialer, when set, makes every connection (the scale scenario
	// spreads connections over several addresses); default go-redis's.
	Dialer bench.Dialer
	// SeparateClients makes each waiting thread subscribe on a connection
	// no other waiting thread of the Locker uses at that time, as if each
	// were a client of its own (bench.OpenOptions.SeparateClients): every
	// unlock message then reaches each waiter's connection. The command
	// pool stays shared. Default: one subscription connection for the
	// Locker, as in one Redisson client.
	SeparateClients bool
}

func (c Config) withDefaults() Config {
	if c.PoolSize <= 0 {
		c.PoolSize = redisbench.DefaultPoolSize
	}
	return c
}

// Settings describes what both Redisson locks share, for results.json;
// each contender adds its scripts.
func (c Config) Settings() results.Settings {
	c = c.withDefaults()
	s := results.Settings{
		"client":            "go-redis v9 running Redisson's lock algorithm, reproduced in Go from redisson/redisson (RedissonLock, RedissonBaseLock, LockPubSub); not the Java client",
		"ttl":               "= lease (Redisson's lockWatchdogTimeout, 30s by default, set to the lease for parity)",
		"lock_name":         "hash <key prefix><key>, field <client id>:<thread id> holding the reentrancy count; client id: 128 random bits per Locker (one Locker is one Redisson client); thread id: a new one per Acquire call",
		"wait":              "pub/sub wake-up, retry at the remaining TTL: a refused try returns the lock's remaining TTL; the waiter SUBSCRIBEs, waits for the confirmation, tries again, then waits for an unlock message or that TTL, whichever comes first, and tries again (Redisson's lock())",
		"subscriptions":     subscriptions(c.SeparateClients),
		"watchdog":          "renewal script (HEXISTS field, then PEXPIRE ttl) every ttl/3 per held lock, each call bounded by ttl/3",
		"watchdog_interval": "ttl/3",
		"lost_after":        "a refused renewal, or 0.8 × ttl after the last confirmed renewal was sent (monolock's client rule, as the redis contender; Redisson itself only stops renewing)",
		"give_up":           "never (waits until the harness cancels)",
		"pool_size":         strconv.Itoa(c.PoolSize),
		"key_prefix":        c.KeyPrefix,
		"token":             "none (Redisson's RLock and fair lock hand out no fencing token; its RFencedLock would, by INCR in the acquire script)",
		"counters":          CountersSource,
		"persistence":       redisbench.Persistence,
		"simplified":        simplified,
	}
	c.Timeouts.Settings(s)
	return s
}

// simplified says where the reproduction differs from Redisson's Java
// client, for both locks.
const simplified = "each Acquire is a thread of its own, so re-entry is in the scripts but never happens through the seam; " +
	"one subscription connection per Locker (Redisson: a pool of them, 50 connections × 5 channels by default) without its PINGs every 30s, or, where a scenario's sessions stand for separate clients (scale), one per waiting thread while the command pool stays shared (separate clients would each have their own: the server sees the same commands and messages, the bench keeps one open file per session); " +
	"instead each thread sends one PING on it when it starts to wait, so that INFO commandstats counts the waiters (one command per wait, not per try); " +
	"the watchdog renews each lock with its own script call (Redisson batches up to 100 locks of a client per call) and declares the lock lost 0.8 × ttl after its last confirmed renewal (Redisson only stops renewing); " +
	"no unlock-latch key (Redisson's guard for retried unlocks: go-redis retries are off here); " +
	"no replica-sync WAIT (checkLockSyncedSlaves: one master without replicas skips it in Redisson too); " +
	"HGET stands for HEXISTS in the acquire and unlock scripts (and HLEN for EXISTS in the fair unlock), so that each counter is one command; the semantics are Redisson's"

// subscriptions describes the subscription connections of a Locker, for
// its settings.
func subscriptions(separate bool) string {
	shared := "one entry per channel shared by the waiting threads on a connection (Redisson's LockPubSub): the first SUBSCRIBEs, the last UNSUBSCRIBEs; an unlock message wakes one of them (a semaphore permit, kept when none waits); SUBSCRIBE and UNSUBSCRIBE are sent in order by one goroutine per connection, never while a thread or the message loop waits for them; no periodic PINGs: each thread sends one PING on its connection when it starts to wait (the waiting counter)"
	if separate {
		return "one subscription connection per waiting thread, as if each were a client of its own (the scale scenario's sessions): a connection is kept for the Locker's next waiting thread once its thread is done; " + shared
	}
	return "one subscription connection per Locker, opened at the first wait (in the scale scenario, whose sessions stand for separate clients, one per waiting thread); " + shared
}

// Client is one Redisson client: its id, its command pool and its
// subscriptions. It is safe for concurrent use.
type Client struct {
	// Redis is the command connection pool.
	Redis *redis.Client
	// TTL is the lock's time to live.
	TTL time.Duration
	// Prefix is put before every lock key.
	Prefix string

	id      string
	threads atomic.Uint64
	pubsub  *pubSub // the Locker's subscriptions, unless separate

	// With SeparateClients, each waiting thread takes a pubSub of its
	// own from spare, or a new one on subscriber.
	separate   bool
	subscriber *redis.Client
	mu         sync.Mutex // guards spare, all and closed
	spare, all []*pubSub
	closed     bool
}

// NewClient returns a client; it does not connect until first use.
func NewClient(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if cfg.Addr == "" {
		return nil, errors.New("redissonlock: no Redis address")
	}
	if cfg.TTL < 3*time.Millisecond {
		return nil, fmt.Errorf("redissonlock: TTL %v must be at least 3ms (the watchdog runs every ttl/3)", cfg.TTL)
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("redissonlock: client id: %w", err)
	}
	rc := redisbench.NewClientDialer(cfg.Addr, cfg.PoolSize, cfg.Timeouts, cfg.Dialer)
	c := &Client{
		Redis: rc, TTL: cfg.TTL, Prefix: cfg.KeyPrefix,
		id:       hex.EncodeToString(b[:]),
		pubsub:   newPubSub(rc),
		separate: cfg.SeparateClients,
	}
	if c.separate {
		// Thousands of subscription connections carry confirmations
		// and one-byte messages: small buffers (go-redis: 32 KiB each
		// way) keep the bench's memory per waiter low.
		o := redisbench.ClientOptions(cfg.Addr, 1, cfg.Timeouts, cfg.Dialer)
		o.ReadBufferSize, o.WriteBufferSize = subscriptionBuffer, subscriptionBuffer
		c.subscriber = redis.NewClient(o)
	}
	return c, nil
}

// subscriptionBuffer is the read and the write buffer of a waiting
// thread's own subscription connection (SeparateClients).
const subscriptionBuffer = 4 << 10

// subscriptions returns the pubSub a waiting thread subscribes on, and
// what to call once the thread is done with it: the Locker's own, or with
// SeparateClients one no other waiting thread uses (a spare one, else a
// new connection).
func (c *Client) subscriptions() (*pubSub, func()) {
	if !c.separate {
		return c.pubsub, func() {}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.pubsub, func() {} // closed: its subscribe fails
	}
	var p *pubSub
	if n := len(c.spare); n > 0 {
		p, c.spare = c.spare[n-1], c.spare[:n-1]
	} else {
		p = newPubSub(c.subscriber)
		c.all = append(c.all, p)
	}
	return p, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.spare = append(c.spare, p)
	}
}

// Thread returns the lock name of a new thread, "<client id>:<thread id>"
// (Redisson's getLockName): each Acquire is a thread of its own.
func (c *Client) Thread() string {
	return c.id + ":" + strconv.FormatUint(c.threads.Add(1), 10)
}

// Close closes the subscription connections and the pool.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	all := c.all
	c.mu.Unlock()
	errs := []error{c.pubsub.close()}
	for _, p := range all {
		errs = append(errs, p.close())
	}
	if c.subscriber != nil {
		errs = append(errs, c.subscriber.Close())
	}
	return errors.Join(append(errs, c.Redis.Close())...)
}

// Name returns Redisson's name of a key beside the lock key (prefixName):
// prefix, ":", and the lock key in braces unless it has a hash tag of its
// own, e.g. the channel redisson_lock__channel:{key}.
func Name(prefix, key string) string {
	if strings.Contains(key, "{") {
		return prefix + ":" + key
	}
	return prefix + ":{" + key + "}"
}

// UnlockMessage is what an unlock publishes (Redisson's
// LockPubSub.UNLOCK_MESSAGE).
const UnlockMessage = "0"

// WaitRetry is the longest a waiter goes without a try while the lock it
// waits for stays held (bench.Contender.WaitRetry): the remaining TTL its
// last refusal told, at most the TTL (= lease); the watchdog renewing at
// TTL/3 keeps it above ⅔ TTL.
func WaitRetry(lease time.Duration) time.Duration { return lease }

// Caps are the variants neither Redisson lock runs, for the suite's time
// budget: the idle ones (redisbench.WatchdogIdleCaps) and queue-1, whose
// window would span the lease for one waiter.
var Caps = append(slices.Clone(redisbench.WatchdogIdleCaps), bench.Cap{
	Scenario: "scale", Variant: "queue-1",
	Reason: "one waiter's promotion is the graceful handover, which the handover scenario measures for this lock; the queue window of a Redisson lock spans the lease (its waiters' retry at the remaining TTL falls inside), 30s for one waiter",
})
