// Package external is the external backend of the bench: servers the user
// runs (their real Redis, their real monolock) at given addresses, so the
// suite measures their own network. Their CPU time cannot be seen.
package external

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// ErrUnreachable is wrapped by Check when an address does not accept TCP
// connections.
var ErrUnreachable = errors.New("external: server unreachable")

// dialTimeout bounds the reachability check of one address.
const dialTimeout = 3 * time.Second

// Deployment is a fixed map from server role to addresses. It is safe for
// concurrent use; it starts and stops nothing.
type Deployment struct {
	addrs map[string][]string
}

// New returns a Deployment over addrs (role → addresses).
func New(addrs map[string][]string) *Deployment {
	m := map[string][]string{}
	for role, a := range addrs {
		if len(a) > 0 {
			m[role] = slices.Clone(a)
		}
	}
	return &Deployment{addrs: m}
}

// Check dials every address once and reports the first that does not
// answer, wrapping ErrUnreachable.
func (d *Deployment) Check(ctx context.Context) error {
	var dialer net.Dialer
	for role, addrs := range d.addrs {
		for _, a := range addrs {
			ctx, cancel := context.WithTimeout(ctx, dialTimeout)
			c, err := dialer.DialContext(ctx, "tcp", a)
			cancel()
			if err != nil {
				return fmt.Errorf("%w: %s at %s: %w", ErrUnreachable, role, a, err)
			}
			c.Close()
		}
	}
	return nil
}

// Addrs implements bench.Deployment.
func (d *Deployment) Addrs(role string) []string { return d.addrs[role] }

// ServerCPU implements bench.Deployment: an external server's CPU is not
// visible, so ok is always false.
func (d *Deployment) ServerCPU(context.Context, string) (time.Duration, string, bool, error) {
	return 0, "unavailable (external server)", false, nil
}

// Describe implements bench.Deployment.
func (d *Deployment) Describe(env *results.Environment) {
	env.Backend = "external"
	env.NetworkPath = "user-given addresses, reached by the bench host's own network"
	for _, role := range []string{bench.RoleMonolock, bench.RoleRedis, bench.RoleRedlock, bench.RoleTCPFloor} {
		for _, a := range d.addrs[role] {
			env.Servers = append(env.Servers, results.Server{Role: role, Address: a})
		}
	}
}

// Close implements bench.Deployment; there is nothing to stop.
func (d *Deployment) Close() error { return nil }
