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
	// DefaultDialTimeout bounds connecting to a Redis (go-redis: 5s).
	DefaultDialTimeout = time.Second
	// DefaultIOTimeout bounds one read or one write on a connection
	// (go-redis: 3s, and 3 retries): a silent master cannot stall a try
	// for longer, while a busy server on a loaded machine still answers
	// in time.
	DefaultIOTimeout = time.Second
	// GiveUpFactor is the share of the TTL after which a watchdog that
	// could not confirm the lock declares it lost: the rule monolock's
	// client uses (it stops at 0.8 × lease), so both sides give up alike.
	GiveUpFactor = 0.8
)

// Token modes of Config.Token.
const (
	// TokenNone: the lock has no fencing token (plain SET NX).
	TokenNone = ""
	// TokenIncr: at acquire, after SET NX succeeded, INCR a per-key
	// counter on the same Redis and use its value as the fencing token.
	// It is the best a careful user can add to a single Redis: the counter
	// only grows while that server keeps its data, and the token is
	// ordered with the grants only because both live on one server.
	TokenIncr = "incr"
)

// Timeouts are the go-redis connection timeouts every Redis contender
// uses, so that a silent master (paused, blackholed) cannot stall a try
// for go-redis's defaults (dial 5s, read and write 3s, 3 retries).
// Context deadlines are honoured on the connection too
// (ContextTimeoutEnabled), and go-redis's own retries are off: retrying is
// the lock's acquire loop's job.
type Timeouts struct {
	// Dial bounds connecting; default DefaultDialTimeout.
	Dial time.Duration
	// Read and Write bound one read and one write; default
	// DefaultIOTimeout.
	Read, Write time.Duration
	// DialAttempts is how many times go-redis dials before a command fails
	// to connect; default 0: go-redis's 5 attempts, 100ms apart, so a
	// command to a server that is down waits 400ms (or its deadline) even
	// when every dial is refused at once.
	DialAttempts int
}

func (t Timeouts) withDefaults() Timeouts {
	if t.Dial <= 0 {
		t.Dial = DefaultDialTimeout
	}
	if t.Read <= 0 {
		t.Read = DefaultIOTimeout
	}
	if t.Write <= 0 {
		t.Write = DefaultIOTimeout
	}
	return t
}

// Settings records t in s.
func (t Timeouts) Settings(s results.Settings) {
	t = t.withDefaults()
	s["dial_timeout"] = t.Dial.String()
	s["read_timeout"] = t.Read.String()
	s["write_timeout"] = t.Write.String()
	s["context_timeouts"] = "on (go-redis ContextTimeoutEnabled)"
	s["client_retries"] = "off (go-redis MaxRetries -1)"
	if t.DialAttempts > 0 {
		s["dial_attempts"] = strconv.Itoa(t.DialAttempts) + " (go-redis DialerRetries)"
	} else {
		s["dial_attempts"] = "5, 100ms apart (go-redis defaults): a command to a server that is down waits 400ms or its deadline"
	}
}

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
	// Timeouts are the client's connection timeouts; zero fields take
	// their defaults.
	Timeouts Timeouts
	// Token is the token mode: TokenNone (default) or TokenIncr.
	Token string
	// Dialer, when set, makes the pool's connections (the scale scenario
	// spreads connections over several addresses); default go-redis's.
	Dialer bench.Dialer
}

func (c Config) withDefaults() Config {
	c.Timeouts = c.Timeouts.withDefaults()
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
	s := results.Settings{
		"client":     "go-redis v9",
		"acquire":    "SET key <random 128-bit value> NX PX ttl",
		"ttl":        "= lease",
		"release":    "compare-and-delete Lua script",
		"watchdog":   "compare-and-PEXPIRE Lua script every ttl/3 (each call bounded by ttl/3); lost when refused, or 0.8 × ttl after the last confirmed call was sent (monolock's client rule, a timer)",
		"wait":       c.Wait.String(),
		"give_up":    "never (waits until the harness cancels)",
		"pool_size":  strconv.Itoa(c.PoolSize),
		"key_prefix": c.KeyPrefix,
		"token":      "none (SET NX has no fencing token)",
	}
	if c.Token == TokenIncr {
		s["token"] = "INCR of a per-key counter on the same Redis right after SET NX succeeded (the best a careful user can add to a single Redis; the counter lives and dies with that server's data)"
	}
	c.Timeouts.Settings(s)
	return s
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
	if cfg.Token != TokenNone && cfg.Token != TokenIncr {
		return nil, fmt.Errorf("redisbench: unknown token mode %q", cfg.Token)
	}
	return &Redis{cfg: cfg, client: NewClientDialer(cfg.Addr, cfg.PoolSize, cfg.Timeouts, cfg.Dialer)}, nil
}

// NewClient returns a go-redis client with the default Timeouts (see
// NewClientWith).
func NewClient(addr string, poolSize int) *redis.Client {
	return NewClientWith(addr, poolSize, Timeouts{})
}

// probeTimeouts are the timeouts of the bench's own probes (counters,
// version): generous, since an INFO on a server busy with polling
// clients may take a while and nothing waits on it but the bench.
var probeTimeouts = Timeouts{Dial: 5 * time.Second, Read: 5 * time.Second, Write: 5 * time.Second}

// NewClientWith returns a go-redis client as every Redis contender uses
// it: poolSize connections, the timeouts t (zero fields take their
// defaults), context deadlines honoured, no retries inside go-redis, and
// no CLIENT SETINFO on connect, so that the server sees nothing but the
// lock's own commands.
func NewClientWith(addr string, poolSize int, t Timeouts) *redis.Client {
	return NewClientDialer(addr, poolSize, t, nil)
}

// NewClientDialer is NewClientWith dialing with d when d is not nil (the
// scale scenario spreads connections over several addresses).
func NewClientDialer(addr string, poolSize int, t Timeouts, d bench.Dialer) *redis.Client {
	return redis.NewClient(ClientOptions(addr, poolSize, t, d))
}

// ClientOptions are the go-redis options of NewClientDialer, for a client
// that changes some (buffer sizes) before it is made.
func ClientOptions(addr string, poolSize int, t Timeouts, d bench.Dialer) *redis.Options {
	t = t.withDefaults()
	o := &redis.Options{
		Addr:                  addr,
		PoolSize:              poolSize,
		DisableIdentity:       true,
		DialTimeout:           t.Dial,
		ReadTimeout:           t.Read,
		WriteTimeout:          t.Write,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
		DialerRetries:         t.DialAttempts,
	}
	if d != nil {
		o.Dialer = d.DialContext
	}
	return o
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
		sent := time.Now()
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
			h := r.hold(key, value, sent)
			if r.cfg.Token == TokenIncr {
				if err := h.takeToken(ctx); err != nil {
					_ = h.Release(context.WithoutCancel(ctx))
					return nil, err
				}
			}
			return h, nil
		}
		if err := bench.Sleep(ctx, r.cfg.Wait.Delay()); err != nil {
			return nil, err
		}
	}
}

// Close implements bench.Locker.
func (r *Redis) Close() error { return r.client.Close() }

// hold starts the watchdog of a key granted by a SET sent at granted.
func (r *Redis) hold(key, value string, granted time.Time) *redisHeld {
	h := &redisHeld{r: r, key: key, value: value}
	h.Watchdog = StartWatchdog(r.cfg.TTL, granted, func(ctx context.Context) (bool, error) {
		n, err := extendScript.Run(ctx, r.client, []string{key}, value, r.cfg.TTL.Milliseconds()).Int64()
		return err == nil && n == 1, err
	})
	return h
}

type redisHeld struct {
	*Watchdog
	r          *Redis
	key, value string
	token      uint64
	hasToken   bool
}

// tokenSuffix names the counter key of a lock key in TokenIncr mode.
const tokenSuffix = ":token"

// takeToken sets the grant's token from INCR key:token (TokenIncr).
func (h *redisHeld) takeToken(ctx context.Context) error {
	n, err := h.r.client.Incr(ctx, h.key+tokenSuffix).Result()
	if err != nil {
		return fmt.Errorf("redisbench: INCR token: %w", err)
	}
	h.token, h.hasToken = uint64(n), true
	return nil
}

func (h *redisHeld) Token() (uint64, bool) { return h.token, h.hasToken }

// Release stops the watchdog and deletes the key if it is still ours.
func (h *redisHeld) Release(ctx context.Context) error {
	h.Halt()
	defer h.MarkLost()
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
