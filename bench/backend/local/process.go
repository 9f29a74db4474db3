// Package local is the local backend of the bench: the servers the
// contenders describe run as child processes of the bench on 127.0.0.1
// ports — Go servers built with `go build` into a temporary directory,
// other programs from PATH.
package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
)

// startTimeout bounds how long a started server may take to serve.
const startTimeout = 10 * time.Second

// stopGrace is how long Stop waits after the stop signal before it kills.
const stopGrace = 5 * time.Second

// Process is one server child process listening on 127.0.0.1; it
// implements bench.Server. Its methods are safe for concurrent use.
type Process struct {
	name, addr, opsAddr string
	argv                []string
	env                 []string // added to the bench's environment
	ready               func(ctx context.Context, addr, opsAddr string) error
	stopSignal          syscall.Signal // of a graceful stop: the spec's GracefulSignal
	host                Host           // the emulated host it runs on, or nil
	record              *recordFeed    // its standard output, when started to record; else nil

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	stderr *bytes.Buffer
}

// startSpec starts every replica of spec from the executable path (or
// spec.Command) on free 127.0.0.1 ports, each working in a fresh
// directory under dir, and waits until they serve. The replicas start
// concurrently: a cluster member serves only once a quorum runs. The
// addresses of all replicas are chosen first, since a member's arguments
// name its peers; a free port may be taken between FreeAddr and bind, so
// a failed start is tried again on new ports, up to three times. Each
// child gets its own process group, so a Ctrl-C on the terminal reaches
// only the bench, which then stops its children itself. The processes
// returned (also on error, for Close) are the started ones.
func startSpec(ctx context.Context, spec *bench.ServerSpec, path, dir string, pl *placement, record bool) ([]bench.Server, error) {
	var lastErr error
	for range 3 {
		ps, err := specProcesses(ctx, spec, path, dir, pl, record)
		if err != nil {
			return nil, err
		}
		errs := make([]error, len(ps))
		var wg sync.WaitGroup
		for i, p := range ps {
			wg.Go(func() { errs[i] = p.start(ctx) })
		}
		wg.Wait()
		if lastErr = errors.Join(errs...); lastErr == nil {
			servers := make([]bench.Server, len(ps))
			for i, p := range ps {
				servers[i] = p
			}
			return servers, nil
		}
		for i, p := range ps {
			if errs[i] == nil {
				p.stop()
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// specProcesses prepares (but does not start) the replicas of spec on
// fresh free ports, or, with a placement, each on its host at the spec's
// ports; with record, with the spec's RecordArgs and their output fed
// back (FollowRecord).
func specProcesses(ctx context.Context, spec *bench.ServerSpec, path, dir string, pl *placement, record bool) ([]*Process, error) {
	n := spec.Count()
	args := make([]bench.ServerArgs, n)
	hosts := make([]Host, n)
	var peers []string
	for i := range args {
		a := bench.ServerArgs{Replica: i}
		var err error
		if pl != nil {
			h, err := pl.host(ctx, spec.ServerName(i))
			if err != nil {
				return nil, fmt.Errorf("local: %s: %w", spec.ServerName(i), err)
			}
			hosts[i] = h
			for k, v := range spec.Sysctls {
				if err := h.Sysctl(k, v); err != nil {
					return nil, fmt.Errorf("local: %s: %w", spec.ServerName(i), err)
				}
			}
			a.Listen = hostAddr(h, spec.Port, hostPort)
			if spec.OpsPort != 0 {
				a.Ops = hostAddr(h, spec.OpsPort, hostOpsPort)
			}
			if spec.PeerPort != 0 {
				a.PeerListen = hostAddr(h, spec.PeerPort, hostPeerPort)
				peers = append(peers, a.PeerListen)
			}
		} else if a.Listen, err = FreeAddr(); err != nil {
			return nil, err
		}
		if spec.OpsPort != 0 && pl == nil {
			if a.Ops, err = FreeAddr(); err != nil {
				return nil, err
			}
		}
		if spec.PeerPort != 0 && pl == nil {
			if a.PeerListen, err = FreeAddr(); err != nil {
				return nil, err
			}
			peers = append(peers, a.PeerListen)
		}
		if a.Dir, err = os.MkdirTemp(dir, spec.ServerName(i)+"-"); err != nil {
			return nil, fmt.Errorf("local: %w", err)
		}
		args[i] = a
	}
	ps := make([]*Process, n)
	for i, a := range args {
		a.Peers = peers
		argv := append([]string{path}, spec.Args(a)...)
		if spec.Command != nil {
			var err error
			if argv, err = spec.Command(ctx, a); err != nil {
				return nil, fmt.Errorf("local: %s: %w", spec.ServerName(i), err)
			}
		}
		ps[i] = &Process{name: spec.ServerName(i), addr: a.Listen, opsAddr: a.Ops, argv: argv, ready: spec.Ready, stopSignal: spec.GracefulSignal(), host: hosts[i]}
		if record && len(spec.RecordArgs) > 0 {
			ps[i].argv = append(ps[i].argv, spec.RecordArgs...)
			ps[i].record = newRecordFeed()
		}
	}
	return ps, nil
}

// StartProcess starts path with args as a child process named name that
// serves at addr (which args must make it listen on), and waits until addr
// accepts connections. It is for servers whose arguments depend on more
// than one address (a cluster member names its peers).
func StartProcess(ctx context.Context, name, addr, path string, args ...string) (*Process, error) {
	p := &Process{name: name, addr: addr, argv: append([]string{path}, args...), stopSignal: syscall.SIGTERM}
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Process) start(ctx context.Context) error {
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	if p.host != nil {
		// The shim joins the host's namespace and execs the server, which
		// keeps the child's process id.
		cmd = p.host.Command(context.Background(), p.argv[0], p.argv[1:]...)
		if cmd.Err != nil {
			return fmt.Errorf("local: starting %s: %w", p.name, cmd.Err)
		}
	}
	if len(p.env) > 0 {
		cmd.Env = append(os.Environ(), p.env...)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	var stdout io.Reader
	if p.record != nil {
		cmd.Stdout = nil
		var err error
		if stdout, err = cmd.StdoutPipe(); err != nil {
			return fmt.Errorf("local: starting %s: %w", p.name, err)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("local: starting %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() {
		if stdout != nil {
			p.record.read(stdout) // to its end, before Wait closes the pipe
		}
		_ = cmd.Wait()
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited, p.stderr = cmd, exited, &stderr
	p.mu.Unlock()
	if err := p.awaitReady(ctx, exited); err != nil {
		p.stop()
		return fmt.Errorf("local: %s (%s) did not start: %w; output: %s", p.name, p.argv[0], err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// awaitReady dials the server until it answers and its spec's readiness
// check passes, the process exits, ctx ends or startTimeout passes.
func (p *Process) awaitReady(ctx context.Context, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", p.addr)
		if err == nil {
			c.Close()
			if p.ready == nil {
				return nil
			}
			if err = p.ready(ctx, p.addr, p.opsAddr); err == nil {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("process exited")
		case <-ctx.Done():
			return fmt.Errorf("not serving on %s: %w", p.addr, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Name implements bench.Server.
func (p *Process) Name() string { return p.name }

// Addr implements bench.Server.
func (p *Process) Addr() string { return p.addr }

// OpsAddr implements bench.Server.
func (p *Process) OpsAddr() string { return p.opsAddr }

// pid returns the process id of the running child.
func (p *Process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// CPU implements bench.Server: the CPU time of the child's process group
// (the child started it; a server that forks, such as a postmaster and its
// backends, is counted whole) from /proc/<pid>/stat.
func (p *Process) CPU(context.Context) (time.Duration, string, bool, error) {
	cpu, err := host.ProcessGroupCPU(p.pid())
	return cpu, "/proc/<pid>/stat of the process group (utime+stime, and cutime+cstime of reaped children)", err == nil, err
}

// Kill implements bench.Server: SIGKILL, then wait for the child to exit.
func (p *Process) Kill(context.Context) error {
	p.signal(syscall.SIGKILL, 0)
	return nil
}

// Stop implements bench.Server: the stop signal (SIGTERM unless the spec
// names another; a paused child is resumed to receive it), up to 5s, then
// SIGKILL.
func (p *Process) Stop(context.Context) error {
	p.stop()
	return nil
}

func (p *Process) stop() { p.signal(p.stopSignal, stopGrace) }

// Restart implements bench.Server: it stops the child if it still runs
// and starts it again with the same arguments on the same address.
func (p *Process) Restart(ctx context.Context) error {
	p.stop()
	return p.start(ctx)
}

// FollowRecord implements bench.RecordFollower: the lines the current
// process wrote to its standard output.
func (p *Process) FollowRecord(ctx context.Context, since time.Time, started func(from time.Time), line func([]byte)) error {
	if p.record == nil {
		return bench.ErrNotRecording
	}
	return p.record.follow(ctx, since, started, line)
}

// Pause implements bench.Server with SIGSTOP.
func (p *Process) Pause(context.Context) error { return p.send(syscall.SIGSTOP) }

// Unpause implements bench.Server with SIGCONT.
func (p *Process) Unpause(context.Context) error { return p.send(syscall.SIGCONT) }

// Cut implements bench.Server: a server on an emulated host loses every
// packet, SYNs included; child processes on 127.0.0.1 share the bench's
// network, so there it is not supported.
func (p *Process) Cut(context.Context) error {
	if c, ok := p.host.(cutter); ok {
		return c.Cut(true)
	}
	return fmt.Errorf("local: cutting %s off the network: %w", p.name, bench.ErrNotSupported)
}

// Restore implements bench.Server; see Cut.
func (p *Process) Restore(context.Context) error {
	if c, ok := p.host.(cutter); ok {
		return c.Cut(false)
	}
	return fmt.Errorf("local: restoring %s's network: %w", p.name, bench.ErrNotSupported)
}

// VirtualIP implements bench.VirtualIPServer: a virtual IP held by the
// server's emulated host; child processes on 127.0.0.1 have none.
func (p *Process) VirtualIP() (bench.VirtualIP, error) {
	if h, ok := p.host.(virtualIPHost); ok {
		return h.VirtualIP()
	}
	return nil, fmt.Errorf("local: a virtual IP for %s: %w", p.name, bench.ErrNotSupported)
}

func (p *Process) send(sig syscall.Signal) error {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if err := cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("local: %v to %s: %w", sig, p.name, err)
	}
	return nil
}

// signal sends sig and waits for the child to exit, killing it after
// grace when grace is positive.
func (p *Process) signal(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	_ = cmd.Process.Signal(sig)
	_ = cmd.Process.Signal(syscall.SIGCONT) // a paused child must run to exit
	if grace > 0 {
		select {
		case <-exited:
			return
		case <-time.After(grace):
			_ = cmd.Process.Kill()
		}
	}
	<-exited
}

// FreeAddr returns a 127.0.0.1 address with a port that was free a moment
// ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("local: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Footprint implements bench.FootprintReader: the child's memory from
// /proc.
func (p *Process) Footprint(context.Context) (bench.Footprint, error) {
	return host.ProcessFootprint(p.pid())
}

// FileLimits implements bench.LimitReader: the child's RLIMIT_NOFILE.
func (p *Process) FileLimits(context.Context) (bench.FileLimits, error) {
	return host.ProcessFileLimits(p.pid(), p.name)
}
