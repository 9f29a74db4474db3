package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// Packages the local backend builds with `go build`.
const (
	MonolockPackage = "github.com/monolock/monolock-bench/cmd/monolock"
	TCPFloorPackage = "github.com/monolock/monolock-bench/cmd/tcpfloor"
)

// RedlockMasters is the number of independent Redis masters behind the
// redlock role.
const RedlockMasters = 5

// Config selects what a local Deployment starts.
type Config struct {
	// Roles lists the server roles to start (bench.Role*).
	Roles []string
	// MonolockBin and TCPFloorBin are prebuilt binaries; when empty the
	// package is built with `go build` (the working directory must be
	// inside the monolock-bench module).
	MonolockBin, TCPFloorBin string
}

// Deployment is a set of server child processes. Its methods are safe for
// concurrent use.
type Deployment struct {
	dir       string
	mu        sync.Mutex
	processes map[string][]*Process
	closeOnce sync.Once
}

// Start starts the servers of every role in cfg.Roles. On error everything
// started so far is stopped again.
func Start(ctx context.Context, cfg Config) (_ *Deployment, err error) {
	dir, err := os.MkdirTemp("", "monolock-bench-local-")
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	d := &Deployment{dir: dir, processes: map[string][]*Process{}}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	for _, role := range cfg.Roles {
		var ps []*Process
		switch role {
		case bench.RoleRedis:
			p, err := StartRedis(ctx, role, dir)
			if err != nil {
				return nil, err
			}
			ps = append(ps, p)
		case bench.RoleRedlock:
			for i := range RedlockMasters {
				p, err := StartRedis(ctx, fmt.Sprintf("%s-%d", role, i+1), dir)
				if err != nil {
					return nil, err
				}
				ps = append(ps, p)
			}
		case bench.RoleMonolock, bench.RoleTCPFloor:
			bin, pkg := cfg.MonolockBin, MonolockPackage
			if role == bench.RoleTCPFloor {
				bin, pkg = cfg.TCPFloorBin, TCPFloorPackage
			}
			if bin == "" {
				if bin, err = Build(ctx, dir, pkg); err != nil {
					return nil, err
				}
			}
			var extra []string
			var ops string
			if role == bench.RoleMonolock {
				// The ops HTTP server (/metrics) is what scenarios read the
				// coordinator's own counters from (bench.RoleMonolockOps).
				if ops, err = FreeAddr(); err != nil {
					return nil, err
				}
				extra = []string{"-ops-listen", ops}
			}
			p, err := StartBinary(ctx, role, bin, "-listen", extra...)
			if err != nil {
				return nil, err
			}
			p.OpsAddr = ops
			ps = append(ps, p)
		default:
			return nil, fmt.Errorf("local: unknown server role %q", role)
		}
		d.mu.Lock()
		d.processes[role] = ps
		d.mu.Unlock()
	}
	return d, nil
}

// Build builds pkg with `go build` into dir and returns the binary's path.
// The binary is static (CGO_ENABLED=0), like the one in the container image.
func Build(ctx context.Context, dir, pkg string) (string, error) {
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("local: building %s needs the go tool on PATH (or a prebuilt binary): %w", pkg, err)
		}
		return "", fmt.Errorf("local: go build %s (run from the monolock-bench module, or pass a prebuilt binary): %w: %s",
			pkg, err, strings.TrimSpace(string(msg)))
	}
	return out, nil
}

// Processes returns the child processes of role, e.g. to kill one in a
// failover scenario.
func (d *Deployment) Processes(role string) []*Process {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.processes[role]
}

// Addrs implements bench.Deployment. bench.RoleMonolockOps answers the ops
// HTTP addresses of the monolock processes.
func (d *Deployment) Addrs(role string) []string {
	var addrs []string
	if role == bench.RoleMonolockOps {
		for _, p := range d.Processes(bench.RoleMonolock) {
			addrs = append(addrs, p.OpsAddr)
		}
		return addrs
	}
	for _, p := range d.Processes(role) {
		addrs = append(addrs, p.Addr)
	}
	return addrs
}

// ServerCPU implements bench.Deployment: the sum of /proc/<pid>/stat
// user+system time over the role's processes.
func (d *Deployment) ServerCPU(_ context.Context, role string) (time.Duration, string, bool, error) {
	ps := d.Processes(role)
	if len(ps) == 0 {
		return 0, "", false, fmt.Errorf("%w %q", bench.ErrNoServers, role)
	}
	var sum time.Duration
	for _, p := range ps {
		c, err := p.CPU()
		if err != nil {
			return 0, "", false, err
		}
		sum += c
	}
	return sum, "/proc/<pid>/stat (utime+stime)", true, nil
}

// Describe implements bench.Deployment.
func (d *Deployment) Describe(env *results.Environment) {
	env.Backend = "local"
	env.NetworkPath = "loopback 127.0.0.1, servers are child processes of the bench"
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, role := range []string{bench.RoleMonolock, bench.RoleRedis, bench.RoleRedlock, bench.RoleTCPFloor} {
		for _, p := range d.processes[role] {
			env.Servers = append(env.Servers, results.Server{Role: p.Role, Address: p.Addr})
		}
	}
}

// Close stops every child process and removes the temporary directory.
func (d *Deployment) Close() error {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		var all []*Process
		for _, ps := range d.processes {
			all = append(all, ps...)
		}
		d.mu.Unlock()
		var wg sync.WaitGroup
		for _, p := range all {
			wg.Go(p.Stop)
		}
		wg.Wait()
		os.RemoveAll(d.dir)
	})
	return nil
}
