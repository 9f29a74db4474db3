package nemesis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
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

// AwaitStopped implements PauseWatcher: it reads the process's state in
// /proc/<pid>/stat until it is stopped.
func (p *ProcessClient) AwaitStopped(ctx context.Context) (check.Mono, error) {
	return p.await(ctx, true)
}

// AwaitRunning implements PauseWatcher: it reads the process's state until
// it is no longer stopped.
func (p *ProcessClient) AwaitRunning(ctx context.Context) (check.Mono, error) {
	return p.await(ctx, false)
}

// statePoll is how often await reads the process's state: a pause lasts
// leases, a poll costs a few microseconds.
const statePoll = 200 * time.Microsecond

func (p *ProcessClient) await(ctx context.Context, stopped bool) (check.Mono, error) {
	for {
		state, err := processState(p.Pid)
		if err != nil {
			return 0, fmt.Errorf("nemesis: state of %s (pid %d): %w", p.ClientName, p.Pid, err)
		}
		if at := check.Now(); (state == 'T' || state == 't') == stopped {
			return at, nil
		}
		if err := bench.Sleep(ctx, statePoll); err != nil {
			return 0, err
		}
	}
}

// processState returns the state letter of /proc/<pid>/stat ('T' when
// stopped by a signal).
func processState(pid int) (byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold any byte: the state
	// follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, fmt.Errorf("stat %q", b)
	}
	return b[i+2], nil
}

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
