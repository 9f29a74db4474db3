package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/clockshift"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/results"
)

// Deployment is a set of server child processes. Its methods are safe for
// concurrent use.
type Deployment struct {
	dir       string
	mu        sync.Mutex
	specs     []string                  // in start order, for Describe
	processes map[string][]bench.Server // of *Process
	sysctls   map[string]string         // specs' settings the host lacks, for Describe
	place     *placement                // each server's emulated host, or nil
	closeOnce sync.Once
}

// Start starts the servers of every spec; bins maps a spec name to a
// prebuilt binary used instead of building its GoPackage. On error
// everything started so far is stopped again.
func Start(ctx context.Context, specs []*bench.ServerSpec, bins map[string]string) (*Deployment, error) {
	return StartOn(ctx, specs, bins, nil, false)
}

// StartOn is Start with every server on a host of its own that hosts
// gives (nil: 127.0.0.1, as Start): each runs inside its host's network
// namespace, listening at its host's address on the spec's container
// ports, and cluster members reach each other at their hosts' addresses.
// With record, each server runs with its spec's RecordArgs and hands its
// record back (bench.RecordFollower).
func StartOn(ctx context.Context, specs []*bench.ServerSpec, bins map[string]string, hosts Hosts, record bool) (_ *Deployment, err error) {
	dir, err := os.MkdirTemp("", "monolock-bench-local-")
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	d := &Deployment{dir: dir, processes: map[string][]bench.Server{}, sysctls: hostSysctls(specs)}
	if hosts != nil {
		d.place = &placement{hosts: hosts, by: map[string]Host{}}
		for _, spec := range specs {
			for k, want := range spec.Sysctls {
				d.sysctls[spec.Name+": "+k] = want + " (set in each server's emulated host)"
			}
		}
	}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	// Servers may run as another user (PostgreSQL refuses root): they
	// must reach their directories below this one.
	if err := os.Chmod(dir, 0o711); err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	for _, spec := range specs {
		var path string
		if spec.Command == nil {
			if path, err = program(ctx, dir, spec, bins[spec.Name]); err != nil {
				return nil, err
			}
		}
		ps, err := startSpec(ctx, spec, path, dir, d.place, record)
		d.mu.Lock()
		d.processes[spec.Name] = ps
		d.mu.Unlock()
		if err != nil {
			return nil, err
		}
		d.specs = append(d.specs, spec.Name)
	}
	return d, nil
}

// hostSysctls compares the settings the specs want (ServerSpec.Sysctls)
// with the host's and describes each, keyed "<spec>: <name>". The local
// servers share the host's network namespace, whose settings the bench
// never changes: where the host's value differs the server runs without
// it, and the record says so.
func hostSysctls(specs []*bench.ServerSpec) map[string]string {
	m := map[string]string{}
	for _, spec := range specs {
		for k, want := range spec.Sysctls {
			have, err := host.Sysctl(k)
			switch {
			case err != nil:
				m[spec.Name+": "+k] = fmt.Sprintf("wanted %s, host value unreadable (%v): not set", want, err)
			case have == want:
				m[spec.Name+": "+k] = want + " (the host's own setting)"
			default:
				m[spec.Name+": "+k] = fmt.Sprintf("wanted %s, host has %s: not set (the local backend does not change host settings; the server runs with the host's)", want, have)
			}
		}
	}
	return m
}

// ErrNoExecutable is wrapped when a spec's executable is not on PATH.
var ErrNoExecutable = errors.New("local: executable not found on PATH")

// program returns the executable of spec: bin if given, else its
// GoPackage built into dir, else its Executable from PATH.
func program(ctx context.Context, dir string, spec *bench.ServerSpec, bin string) (string, error) {
	switch {
	case bin != "":
		return bin, nil
	case spec.GoPackage != "":
		return Build(ctx, dir, spec.GoPackage)
	}
	path, err := exec.LookPath(spec.Executable)
	if err != nil {
		return "", fmt.Errorf("%w: %s (install it, e.g. apt-get install -y %s)", ErrNoExecutable, spec.Executable, spec.Executable)
	}
	return path, nil
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

// Servers implements bench.Deployment.
func (d *Deployment) Servers(spec string) []bench.Server {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.processes[spec])
}

// Describe implements bench.Deployment.
func (d *Deployment) Describe(env *results.Environment) {
	env.Backend = "local"
	env.NetworkPath = "loopback 127.0.0.1, servers are child processes of the bench"
	if d.place != nil {
		env.NetworkPath = "emulated hosts: every server a child process of the bench in a network namespace of its own, reached through the delay line"
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.sysctls) > 0 && env.Sysctls == nil {
		env.Sysctls = map[string]string{}
	}
	maps.Copy(env.Sysctls, d.sysctls)
	for _, spec := range d.specs {
		for _, p := range d.processes[spec] {
			env.Servers = append(env.Servers, results.Server{Role: p.Name(), Address: p.Addr()})
		}
	}
}

// Close stops every child process and removes the temporary directory.
func (d *Deployment) Close() error {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		var all []bench.Server
		for _, ps := range d.processes {
			all = append(all, ps...)
		}
		d.mu.Unlock()
		var wg sync.WaitGroup
		for _, p := range all {
			wg.Go(func() { _ = p.Stop(context.Background()) })
		}
		wg.Wait()
		os.RemoveAll(d.dir)
	})
	return nil
}

// StartClockShifted implements bench.ClockShifter: spec.Count() new
// processes of spec's Executable run with the clockshift LD_PRELOAD
// interposer (built with the host's C compiler), each with its own offset
// file. A Go server is a static binary the interposer does not reach, so
// it is refused.
func (d *Deployment) StartClockShifted(ctx context.Context, spec *bench.ServerSpec) (_ []bench.ClockShiftedServer, _ func(), err error) {
	if spec.GoPackage != "" || spec.Command != nil || spec.Executable == "" {
		return nil, nil, fmt.Errorf("%w: %s is not a host executable the interposer can be preloaded into", bench.ErrNotSupported, spec.Name)
	}
	path, err := program(ctx, d.dir, spec, "")
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp(d.dir, spec.Name+"-shifted-")
	if err != nil {
		return nil, nil, fmt.Errorf("local: %w", err)
	}
	lib, err := clockshift.Build(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	var out []bench.ClockShiftedServer
	stop := func() {
		for _, s := range out {
			_ = s.Stop(context.Background())
		}
		os.RemoveAll(dir)
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	ps, err := specProcesses(ctx, spec, path, dir, nil, false) // on 127.0.0.1: the spec's servers hold its hosts' names
	if err != nil {
		return nil, nil, err
	}
	for i, p := range ps {
		shift := &clockshift.Shift{Lib: lib, File: filepath.Join(dir, fmt.Sprintf("offset-%d", i))}
		if err := shift.Set(0); err != nil {
			return nil, nil, err
		}
		p.env = shift.Env()
		if err := p.start(ctx); err != nil {
			return nil, nil, err
		}
		out = append(out, shiftedProcess{p, shift})
	}
	return out, stop, nil
}

// shiftedProcess is a server process under the clockshift interposer.
type shiftedProcess struct {
	*Process
	shift *clockshift.Shift
}

func (s shiftedProcess) ShiftClock(_ context.Context, d time.Duration) error { return s.shift.Set(d) }
