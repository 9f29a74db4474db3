package redisbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// Defaults of Config.
const (
	DefaultPoolSize  = 128
	DefaultKeyPrefix = "monolock-bench:"
)

// ErrNotHeld is returned by Release when the lock's value was no longer
// in Redis (it expired and maybe someone else took it).
var ErrNotHeld = errors.New("redisbench: lock was no longer held at release")

// Lua scripts: compare-and-delete releases only our own lock;
// compare-and-PEXPIRE extends only our own lock.
var (
	releaseScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)
	extendScript  = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`)
)

// Config configures a Redis locker.
type Config struct {
	// Addr is the Redis host:port.
	Addr string
	// TTL is the key's time to live (PX). Required: parity with the
	// monolock lease.
	TTL time.Duration
	// Wait is the retry strategy while the key is taken; default JitterWait.
	Wait Wait
	// PoolSize is go-redis's connection pool size; default DefaultPoolSize,
	// large enough that 64 workers plus their watchdogs never queue for a
	// connection.
	PoolSize int
	// KeyPrefix is put before every key; default DefaultKeyPrefix.
	KeyPrefix string
	// Dialer, when set, makes the pool's connections (the scale scenario
	// spreads connections over several addresses); default go-redis's.
	Dialer bench.Dialer
}

func (c Config) withDefaults() Config {
	if c.Wait == (Wait{}) {
		c.Wait = JitterWait
	}
	if c.PoolSize <= 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	return c
}

// Settings describes the configuration for results.json.
func (c Config) Settings() results.Settings {
	c = c.withDefaults()
	return results.Settings{
		"client":     "go-redis v9",
		"acquire":    "SET key <random 128-bit value> NX PX ttl",
		"ttl":        "= lease",
		"release":    "compare-and-delete Lua script",
		"watchdog":   "compare-and-PEXPIRE Lua script every ttl/3; lost when refused or unconfirmed for a ttl",
		"wait":       c.Wait.String(),
		"give_up":    "never (waits until the harness cancels)",
		"pool_size":  strconv.Itoa(c.PoolSize),
		"key_prefix": c.KeyPrefix,
	}
}

// Redis is a single-instance Redis lock. It is safe for concurrent use.
type Redis struct {
	cfg    Config
	client *redis.Client
}

// NewRedis returns a Redis locker; it does not connect until first use.
func NewRedis(cfg Config) (*Redis, error) {
	cfg = cfg.withDefaults()
	if cfg.TTL < time.Millisecond {
		return nil, fmt.Errorf("redisbench: TTL %v must be at least 1ms", cfg.TTL)
	}
	return &Redis{cfg: cfg, client: newClient(cfg.Addr, cfg.PoolSize, cfg.Dialer)}, nil
}

// NewClient returns a go-redis client as every Redis contender uses it:
// poolSize connections, and no CLIENT SETINFO on connect, so that the
// server sees nothing but the lock's own commands.
func NewClient(addr string, poolSize int) *redis.Client { return newClient(addr, poolSize, nil) }

// newClient is NewClient dialing with d when d is not nil.
func newClient(addr string, poolSize int, d bench.Dialer) *redis.Client {
	o := &redis.Options{
		Addr:            addr,
		PoolSize:        poolSize,
		DisableIdentity: true,
	}
	if d != nil {
		o.Dialer = d.DialContext
	}
	return redis.NewClient(o)
}

// Acquire implements bench.Locker: SET NX PX, then the waiting strategy's
// delay, until granted or ctx ends. It never gives up on its own.
func (r *Redis) Acquire(ctx context.Context, key string) (bench.Held, error) {
	key = r.cfg.KeyPrefix + key
	value, err := randomValue()
	if err != nil {
		return nil, err
	}
	for {
		ok, err := r.client.SetNX(ctx, key, value, r.cfg.TTL).Result()
		if ctx.Err() != nil {
			if ok { // granted just as ctx ended: do not leave it behind
				_ = releaseScript.Run(context.WithoutCancel(ctx), r.client, []string{key}, value).Err()
			}
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("redisbench: SET NX: %w", err)
		}
		if ok {
			return r.hold(key, value), nil
		}
		if err := bench.Sleep(ctx, r.cfg.Wait.Delay()); err != nil {
			return nil, err
		}
	}
}

// Close implements bench.Locker.
func (r *Redis) Close() error { return r.client.Close() }

// hold starts the watchdog of a granted key. A refused extension (the value
// is gone) is a loss at once; failed calls are retried at the next tick
// until a whole TTL passed without confirmation.
func (r *Redis) hold(key, value string) *redisHeld {
	h := &redisHeld{r: r, key: key, value: value}
	ttl := r.cfg.TTL
	confirmed := time.Now()
	h.watchdog = startWatchdog(ttl, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), ttl/3)
		defer cancel()
		n, err := extendScript.Run(ctx, r.client, []string{key}, value, ttl.Milliseconds()).Int64()
		if err == nil && n == 1 {
			confirmed = time.Now()
			return false
		}
		return err == nil || time.Since(confirmed) >= ttl
	})
	return h
}

type redisHeld struct {
	*watchdog
	r          *Redis
	key, value string
}

func (h *redisHeld) Token() (uint64, bool) { return 0, false }

// Release stops the watchdog and deletes the key if it is still ours.
func (h *redisHeld) Release(ctx context.Context) error {
	h.halt()
	defer h.markLost()
	n, err := releaseScript.Run(ctx, h.r.client, []string{h.key}, h.value).Int64()
	if err != nil {
		return fmt.Errorf("redisbench: release: %w", err)
	}
	if n == 0 {
		return ErrNotHeld
	}
	return nil
}

func randomValue() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("redisbench: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
