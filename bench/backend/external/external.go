// Package external is the external backend of the bench: servers the user
// runs at given addresses, so the suite measures their own network. Their
// CPU time cannot be seen and they cannot be acted on: the fault
// operations return errors wrapping bench.ErrNotSupported.
package external

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// ErrUnreachable is wrapped by Check when an address does not accept TCP
// connections.
var ErrUnreachable = errors.New("external: server unreachable")

// dialTimeout bounds the reachability check of one address.
const dialTimeout = 3 * time.Second

// Addrs are the addresses of the servers of one spec.
type Addrs struct {
	// Addrs are the servers' host:port, one per replica.
	Addrs []string
	// Ops are their operations host:port, optional.
	Ops []string
}

// Deployment is a fixed set of user-given servers. It is safe for
// concurrent use; it starts and stops nothing.
type Deployment struct {
	specs   []string
	servers map[string][]bench.Server
}

// New returns a Deployment over the given addresses of each spec, in the
// order of specs; specs without addresses are left out.
func New(specs []*bench.ServerSpec, addrs map[string]Addrs) *Deployment {
	d := &Deployment{servers: map[string][]bench.Server{}}
	for _, spec := range specs {
		a := addrs[spec.Name]
		if len(a.Addrs) == 0 {
			continue
		}
		d.specs = append(d.specs, spec.Name)
		for i, addr := range a.Addrs {
			s := &server{name: spec.ServerName(i), addr: addr}
			if i < len(a.Ops) {
				s.ops = a.Ops[i]
			}
			d.servers[spec.Name] = append(d.servers[spec.Name], s)
		}
	}
	return d
}

// Check dials every address once and reports the first that does not
// answer, wrapping ErrUnreachable.
func (d *Deployment) Check(ctx context.Context) error {
	var dialer net.Dialer
	for _, spec := range d.specs {
		for _, s := range d.servers[spec] {
			ctx, cancel := context.WithTimeout(ctx, dialTimeout)
			c, err := dialer.DialContext(ctx, "tcp", s.Addr())
			cancel()
			if err != nil {
				return fmt.Errorf("%w: %s at %s: %w", ErrUnreachable, s.Name(), s.Addr(), err)
			}
			c.Close()
		}
	}
	return nil
}

// Servers implements bench.Deployment.
func (d *Deployment) Servers(spec string) []bench.Server { return d.servers[spec] }

// Describe implements bench.Deployment.
func (d *Deployment) Describe(env *results.Environment) {
	env.Backend = "external"
	env.NetworkPath = "user-given addresses, reached by the bench host's own network"
	for _, spec := range d.specs {
		for _, s := range d.servers[spec] {
			env.Servers = append(env.Servers, results.Server{Role: s.Name(), Address: s.Addr()})
		}
	}
}

// Close implements bench.Deployment; there is nothing to stop.
func (d *Deployment) Close() error { return nil }

// server is one user-given server.
type server struct{ name, addr, ops string }

func (s *server) Name() string    { return s.name }
func (s *server) Addr() string    { return s.addr }
func (s *server) OpsAddr() string { return s.ops }

// CPU implements bench.Server: an external server's CPU is not visible.
func (s *server) CPU(context.Context) (time.Duration, string, bool, error) {
	return 0, "unavailable (external server)", false, nil
}

func (s *server) unsupported(op string) error {
	return fmt.Errorf("external: cannot %s %s, a server the bench does not run: %w", op, s.name, bench.ErrNotSupported)
}

func (s *server) Kill(context.Context) error    { return s.unsupported("kill") }
func (s *server) Stop(context.Context) error    { return s.unsupported("stop") }
func (s *server) Restart(context.Context) error { return s.unsupported("restart") }
func (s *server) Pause(context.Context) error   { return s.unsupported("pause") }
func (s *server) Unpause(context.Context) error { return s.unsupported("unpause") }
func (s *server) Cut(context.Context) error     { return s.unsupported("cut off") }
func (s *server) Restore(context.Context) error { return s.unsupported("restore") }
