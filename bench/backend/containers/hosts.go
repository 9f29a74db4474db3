package containers

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/monolock/monolock-bench/bench"
)

// Host is an emulated host a server's container is attached to: the
// container's own network namespace with a link to a delay line and an
// address on it (bench/network's Host, of Network.AttachNamespace).
type Host interface {
	IP() netip.Addr
	// Reattach moves the host to the namespace of process pid: a
	// restarted container has a new one.
	Reattach(ctx context.Context, pid int) error
	// Cut drops (true) or delivers again (false) every packet to and
	// from the host on its link.
	Cut(cut bool) error
}

// Hosts attaches the running container of the server of this name, whose
// main process is pid, to an emulated host. Nil keeps every server on the
// session network alone.
type Hosts func(ctx context.Context, server string, pid int) (Host, error)

// attach puts the container of s on the host hosts gives it: from then on
// the bench reaches it at the host's address, through the line.
func (s *server) attach(ctx context.Context, hosts Hosts) error {
	pid, err := s.c.PID(ctx)
	if err != nil {
		return err
	}
	h, err := hosts(ctx, s.c.Name, pid)
	if err != nil {
		return fmt.Errorf("containers: %s on an emulated host: %w", s.c.Name, err)
	}
	s.mu.Lock()
	s.host = h
	s.mu.Unlock()
	return nil
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

// restartOnHost restarts the container and moves its host to the new
// namespace.
func (s *server) restartOnHost(ctx context.Context, h Host) error {
	if err := s.c.Restart(ctx); err != nil {
		return err
	}
	pid, err := s.c.PID(ctx)
	if err != nil {
		return err
	}
	if err := h.Reattach(ctx, pid); err != nil {
		return fmt.Errorf("containers: reattach %s (pid %s): %w", s.c.Name, strconv.Itoa(pid), err)
	}
	return nil
}

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

// cutOnHost cuts the container off both paths: the line (the bench) and
// the session network (its peers).
func (s *server) cutOnHost(ctx context.Context, h Host, cut bool) error {
	if err := h.Cut(cut); err != nil {
		return err
	}
	if cut {
		return s.c.Cut(ctx)
	}
	return s.c.Restore(ctx)
}
