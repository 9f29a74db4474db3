package nemesis

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/monolock/monolock-bench/bench"
)

// Link is one path of a client to a lock server that can go silent both
// ways and pass again (faultproxy's Link is one).
type Link interface {
	Blackhole() error
	Restore() error
}

// OneWayLink is a Link that can also drop one direction only: upstream is
// the client's traffic to the server, downstream the server's to the
// client. Restore makes both pass again.
type OneWayLink interface {
	Link
	BlackholeUpstream() error
	BlackholeDownstream() error
}

// ProcessClient is a client process the nemesis faults directly: signals
// to its pid for a pause, and its own links to the lock servers for a host
// loss or a partition. Its methods are safe for concurrent use if its
// links' are.
type ProcessClient struct {
	// ClientName names the client in the history ("c1").
	ClientName string
	// Pid is the process's id; it must be a child not yet waited for, so
	// that the id cannot have been reused.
	Pid int
	// Links are the client's paths to the lock servers, one per server.
	Links []Link
}

// Name implements Client.
func (p *ProcessClient) Name() string { return p.ClientName }

// Pause implements Client with SIGSTOP.
func (p *ProcessClient) Pause(context.Context) error { return p.signal(syscall.SIGSTOP) }

// Resume implements Client with SIGCONT.
func (p *ProcessClient) Resume(context.Context) error { return p.signal(syscall.SIGCONT) }

func (p *ProcessClient) signal(sig syscall.Signal) error {
	if err := syscall.Kill(p.Pid, sig); err != nil {
		return fmt.Errorf("nemesis: %v to %s (pid %d): %w", sig, p.ClientName, p.Pid, err)
	}
	return nil
}

// LoseHost implements Client: every link blackholes.
func (p *ProcessClient) LoseHost(context.Context) error {
	return p.links("losing the host", Link.Blackhole)
}

// RestoreHost implements Client: every link passes again.
func (p *ProcessClient) RestoreHost(context.Context) error {
	return p.links("restoring the host", Link.Restore)
}

// Partition implements Client: every link drops direction d. Links that
// cannot drop one direction make it unsupported.
func (p *ProcessClient) Partition(_ context.Context, d Direction) error {
	if len(p.Links) == 0 {
		return fmt.Errorf("nemesis: %s has no links to partition: %w", p.ClientName, bench.ErrNotSupported)
	}
	for _, l := range p.Links {
		if _, ok := l.(OneWayLink); !ok {
			return fmt.Errorf("nemesis: %s's links cannot drop one direction only: %w", p.ClientName, bench.ErrNotSupported)
		}
	}
	return p.links("partitioning "+string(d), func(l Link) error {
		if d == FromServer {
			return l.(OneWayLink).BlackholeDownstream()
		}
		return l.(OneWayLink).BlackholeUpstream()
	})
}

// Heal implements Client: every link passes again.
func (p *ProcessClient) Heal(context.Context) error {
	return p.links("healing", Link.Restore)
}

func (p *ProcessClient) links(what string, do func(Link) error) error {
	if len(p.Links) == 0 {
		return fmt.Errorf("nemesis: %s has no links: %w", p.ClientName, bench.ErrNotSupported)
	}
	var errs []error
	for _, l := range p.Links {
		errs = append(errs, do(l))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("nemesis: %s %s: %w", what, p.ClientName, err)
	}
	return nil
}
