package floors

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/redisbench"
)

// Redis returns the redis-floor row of the contender table. It runs on
// the redis contender's server.
func Redis() bench.Contender {
	return bench.Contender{
		Name: "redis-floor", Label: "redis-floor", Family: "floor", Colour: "#999999",
		Server: redisbench.Server, Floor: true, Settings: RedisSettings(0),
		Claims: results.OfKind(results.ClaimTarget, []results.ClaimRule{belowLock("redis-floor", "redis", "whose acquire is one command on the same pooled connection")}),
		New: func(_ context.Context, addrs []string, _ time.Duration, _ bench.OpenOptions) (bench.Locker, error) {
			return NewRedis(addrs[0], 0), nil
		},
	}
}

// RedisFloor is the redis-floor baseline: Acquire is one PING and Release
// is one PING on go-redis's persistent connections. It is safe for
// concurrent use.
type RedisFloor struct{ client *redis.Client }

// NewRedis returns a RedisFloor on the Redis at addr with a pool of
// poolSize connections (redisbench.DefaultPoolSize when zero or less).
func NewRedis(addr string, poolSize int) *RedisFloor {
	if poolSize <= 0 {
		poolSize = redisbench.DefaultPoolSize
	}
	return &RedisFloor{client: redisbench.NewClient(addr, poolSize)}
}

// RedisSettings describes the redis-floor for results.json.
func RedisSettings(poolSize int) results.Settings {
	if poolSize <= 0 {
		poolSize = redisbench.DefaultPoolSize
	}
	return results.Settings{
		"client":    "go-redis v9",
		"acquire":   "PING",
		"release":   "PING",
		"locks":     "nothing (a baseline)",
		"pool_size": fmt.Sprint(poolSize),
	}
}

// Acquire implements bench.Locker with one PING.
func (f *RedisFloor) Acquire(ctx context.Context, _ string) (bench.Held, error) {
	if err := f.client.Ping(ctx).Err(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("floors: redis-floor PING: %w", err)
	}
	return redisHeld{f}, nil
}

// Close implements bench.Locker.
func (f *RedisFloor) Close() error { return f.client.Close() }

type redisHeld struct{ f *RedisFloor }

func (redisHeld) Token() (uint64, bool) { return 0, false }
func (redisHeld) Lost() <-chan struct{} { return neverLost }
func (h redisHeld) Release(ctx context.Context) error {
	if err := h.f.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("floors: redis-floor PING: %w", err)
	}
	return nil
}
