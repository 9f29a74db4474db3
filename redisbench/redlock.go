package redisbench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// DefaultMaxWait is how long a Redlock waiter keeps trying before redsync's
// retry loop gives up, unless RedlockConfig.Tries says otherwise.
const DefaultMaxWait = time.Minute

// RedlockConfig configures a Redlock locker.
type RedlockConfig struct {
	// Addrs are the independent Redis masters (Masters in the bench;
	// quorum is len(Addrs)/2+1, redsync's rule). Settings assumes Masters
	// when Addrs is empty.
	Addrs []string
	// TTL is redsync's expiry. Required: parity with the monolock lease.
	TTL time.Duration
	// Wait is redsync's retry delay; default JitterWait (redsync's own
	// default, set explicitly so it is reported).
	Wait Wait
	// Tries is redsync's number of attempts; default: enough that a waiter
	// tries for at least DefaultMaxWait (DefaultMaxWait/Wait.Min + 1), so
	// it does not give up silently in a scenario. Give-ups are returned
	// wrapping bench.ErrGaveUp.
	Tries int
	// PoolSize per master; default DefaultPoolSize.
	PoolSize int
	// KeyPrefix is put before every key; default DefaultKeyPrefix.
	KeyPrefix string
	// Timeouts are the connection timeouts of every master's client; zero
	// fields take their defaults.
	Timeouts Timeouts
	// Dialer, when set, makes the pools' connections; default go-redis's.
	Dialer bench.Dialer
}

func (c RedlockConfig) withDefaults() RedlockConfig {
	c.Timeouts = c.Timeouts.withDefaults()
	if c.Wait == (Wait{}) {
		c.Wait = JitterWait
	}
	if c.Tries <= 0 {
		c.Tries = int(DefaultMaxWait/max(c.Wait.Min, time.Microsecond)) + 1
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
func (c RedlockConfig) Settings() results.Settings {
	c = c.withDefaults()
	masters := len(c.Addrs)
	if masters == 0 {
		masters = Masters
	}
	s := results.Settings{
		"client":         "go-redsync/redsync v4 over go-redis v9 pools",
		"masters":        strconv.Itoa(masters),
		"quorum":         strconv.Itoa(masters/2 + 1),
		"ttl":            "= lease (redsync expiry)",
		"wait":           c.Wait.String(),
		"tries":          strconv.Itoa(c.Tries),
		"give_up":        "after tries attempts; counted as a failure",
		"watchdog":       "Mutex.Extend every ttl/3 (each call bounded by ttl/3); lost when an Extend fails, or 0.8 × ttl after the last confirmed try started (monolock's client rule), whichever comes first",
		"drift_factor":   "0.01 (redsync default)",
		"timeout_factor": "0.05 (redsync default: each try waits at most 0.05 × ttl for a master)",
		"fail_fast":      "off: with WithFailFast (redsync v4.18.1) Unlock of a held lock under contention answered 'lock already taken' (TestMutualExclusion, redlock/spin); a silent master cannot stall a try anyway: each try waits at most timeout_factor × ttl, which go-redis honours with context timeouts on",
		"pool_size":      strconv.Itoa(c.PoolSize) + " per master",
		"key_prefix":     c.KeyPrefix,
		"token":          "none: five independent masters have no ordered counter, so Redlock cannot be fenced by a token taken at acquire",
	}
	c.Timeouts.Settings(s)
	return s
}

// Redlock is a Redlock locker. It is safe for concurrent use.
type Redlock struct {
	cfg     RedlockConfig
	clients []*redis.Client
	rs      *redsync.Redsync
}

// NewRedlock returns a Redlock locker over one go-redis pool per master; it
// does not connect until first use.
func NewRedlock(cfg RedlockConfig) (*Redlock, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Addrs) == 0 {
		return nil, errors.New("redisbench: Redlock needs at least one master address")
	}
	if cfg.TTL < time.Millisecond {
		return nil, fmt.Errorf("redisbench: TTL %v must be at least 1ms", cfg.TTL)
	}
	r := &Redlock{cfg: cfg}
	var pools []redsyncredis.Pool
	for _, a := range cfg.Addrs {
		c := NewClientDialer(a, cfg.PoolSize, cfg.Timeouts, cfg.Dialer)
		r.clients = append(r.clients, c)
		pools = append(pools, goredis.NewPool(c))
	}
	r.rs = redsync.New(pools...)
	return r, nil
}

// Acquire implements bench.Locker with redsync's LockContext and its retry
// loop. When the tries run out while ctx is live the error wraps
// bench.ErrGaveUp.
func (r *Redlock) Acquire(ctx context.Context, key string) (bench.Held, error) {
	m := r.rs.NewMutex(r.cfg.KeyPrefix+key,
		redsync.WithExpiry(r.cfg.TTL),
		redsync.WithTries(r.cfg.Tries),
		redsync.WithRetryDelayFunc(func(int) time.Duration { return r.cfg.Wait.Delay() }),
	)
	if err := m.LockContext(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w after %d tries: %w", bench.ErrGaveUp, r.cfg.Tries, err)
	}
	// The watchdog extends on a quorum every ttl/3; a failed Extend means
	// the quorum no longer confirms the lock. redsync's validity (Until)
	// starts from the successful try's start less the drift.
	wd := StartWatchdog(r.cfg.TTL, m.Until().Add(-r.cfg.TTL), func(ctx context.Context) (bool, error) {
		ok, err := m.ExtendContext(ctx)
		return ok && err == nil, nil
	})
	return &redlockHeld{Watchdog: wd, m: m}, nil
}

// Close implements bench.Locker.
func (r *Redlock) Close() error {
	var errs []error
	for _, c := range r.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

type redlockHeld struct {
	*Watchdog
	m *redsync.Mutex
}

func (h *redlockHeld) Token() (uint64, bool) { return 0, false }

// Release stops the watchdog and unlocks on every master.
func (h *redlockHeld) Release(ctx context.Context) error {
	h.Halt()
	defer h.MarkLost()
	ok, err := h.m.UnlockContext(ctx)
	if err != nil {
		return fmt.Errorf("redisbench: redlock release: %w", err)
	}
	if !ok {
		return ErrNotHeld
	}
	return nil
}
