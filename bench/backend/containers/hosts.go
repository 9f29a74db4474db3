package containers

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
)

// Host is an emulated host a server's container is attached to: the
// container's own network namespace with a link to a delay line and an
// address on it (bench/network's Host, of Network.ReserveHost).
type Host interface {
	IP() netip.Addr
	// Attach gives the host the namespace of process pid: a container
	// just started, or restarted with a new namespace.
	Attach(ctx context.Context, pid int) error
	// Cut drops (true) or delivers again (false) every packet to and
	// from the host on its link.
	Cut(cut bool) error
}

// Hosts reserves an emulated host, with its address, for the server of
// this name before its container starts, so that cluster members can be
// told each other's addresses on the line. Nil keeps every server on the
// session network alone.
type Hosts func(ctx context.Context, server string) (Host, error)

// attachOnStart wraps ready so that each start of the server's container
// first attaches the container's namespace to the server's host: a
// cluster member is ready only once a quorum reaches it through the
// line.
func (s *server) attachOnStart(ready engine.ReadyFunc) engine.ReadyFunc {
	return func(ctx context.Context, c *engine.Container) error {
		pid, err := c.PID(ctx)
		if err != nil {
			return err
		}
		s.mu.Lock()
		if pid != s.attached {
			if err := s.host.Attach(ctx, pid); err != nil {
				s.mu.Unlock()
				return fmt.Errorf("containers: %s on its emulated host (pid %s): %w", c.Name, strconv.Itoa(pid), err)
			}
			s.attached = pid
		}
		s.mu.Unlock()
		return ready(ctx, c)
	}
}

// onHost returns the server's emulated host, nil when it has none.
func (s *server) onHost() Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

// hostAddr is port on the server's emulated host.
func hostAddr(h Host, port int) string {
	return netip.AddrPortFrom(h.IP(), uint16(port)).String()
}

// errOneAddress is returned by Destinations for more than one address of
// a server on an emulated host: the line gives the bench many source
// addresses instead.
var errOneAddress = fmt.Errorf("%w: a server on an emulated host has one address (spread over the bench's source addresses instead)", bench.ErrNotSupported)

// virtualIPHost is a host that can hold a virtual IP of its network
// (bench/network's Host).
type virtualIPHost interface {
	VirtualIP() (bench.VirtualIP, error)
}

// VirtualIP implements bench.VirtualIPServer: a virtual IP held by the
// container's emulated host; a container on the session network alone
// has none.
func (s *server) VirtualIP() (bench.VirtualIP, error) {
	if h, ok := s.onHost().(virtualIPHost); ok {
		return h.VirtualIP()
	}
	return nil, fmt.Errorf("containers: a virtual IP for %s: %w", s.c.Name, bench.ErrNotSupported)
}

// cutOnHost cuts the container off both paths: the line (the bench and
// its peers) and the session network (the engine's readiness checks).
func (s *server) cutOnHost(ctx context.Context, h Host, cut bool) error {
	if err := h.Cut(cut); err != nil {
		return err
	}
	if cut {
		return s.c.Cut(ctx)
	}
	return s.c.Restore(ctx)
}
