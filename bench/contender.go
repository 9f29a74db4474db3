package bench

import (
	"context"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// Contender is one row of the contender table wired by cmd/monolock-bench.
type Contender struct {
	// Name is the contender id in results ("monolock", "redis", ...).
	Name string
	// Role is the server role whose addresses Open receives.
	Role string
	// Floor marks a baseline (tcp-floor, redis-floor): it frames the
	// physics in latency and throughput and takes part only in scenarios
	// that accept floors.
	Floor bool
	// ContendedOnly limits the contender to variants where workers share
	// keys: a waiting-strategy variant (e.g. "fast spin") differs from its
	// base contender only when it has to wait.
	ContendedOnly bool
	// Settings are every parameter of the contender (TTL rule, retry delay,
	// tries, watchdog, pools, waiting strategy), recorded in results.json.
	// The runner adds the lease.
	Settings results.Settings
	// Open connects a Locker to the servers at addrs using lease as the
	// lease or TTL (parity: the same value for every contender).
	Open func(ctx context.Context, addrs []string, lease time.Duration) (Locker, error)
}
