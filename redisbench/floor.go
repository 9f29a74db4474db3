package redisbench

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// Floor is the redis-floor baseline: Acquire is one PING and Release is one
// PING on go-redis's persistent connections, the least any two-round-trip
// Redis lock can cost. It locks nothing. It is safe for concurrent use.
type Floor struct{ client *redis.Client }

// NewFloor returns a Floor on the Redis at addr with a pool of poolSize
// connections (DefaultPoolSize when zero or less).
func NewFloor(addr string, poolSize int) *Floor {
	if poolSize <= 0 {
		poolSize = DefaultPoolSize
	}
	return &Floor{client: newClient(addr, poolSize)}
}

// FloorSettings describes the floor for results.json.
func FloorSettings(poolSize int) results.Settings {
	if poolSize <= 0 {
		poolSize = DefaultPoolSize
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
func (f *Floor) Acquire(ctx context.Context, _ string) (bench.Held, error) {
	if err := f.client.Ping(ctx).Err(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("redisbench: floor PING: %w", err)
	}
	return floorHeld{f}, nil
}

// Close implements bench.Locker.
func (f *Floor) Close() error { return f.client.Close() }

type floorHeld struct{ f *Floor }

// neverLost is the Lost channel of a floor grant: a floor holds nothing
// that could be lost.
var neverLost = make(chan struct{})

func (floorHeld) Token() (uint64, bool) { return 0, false }
func (floorHeld) Lost() <-chan struct{} { return neverLost }
func (h floorHeld) Release(ctx context.Context) error {
	if err := h.f.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redisbench: floor PING: %w", err)
	}
	return nil
}

// ServerVersion returns redis_version from INFO server of the Redis at
// addr.
func ServerVersion(ctx context.Context, addr string) (string, error) {
	c := newClient(addr, 1)
	defer c.Close()
	info, err := c.InfoMap(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("redisbench: INFO server at %s: %w", addr, err)
	}
	return info["Server"]["redis_version"], nil
}
