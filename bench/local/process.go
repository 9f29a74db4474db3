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
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/footprint"
	"github.com/monolock/monolock-bench/bench/sessions"
)

// startTimeout bounds how long a started server may take to serve.
const startTimeout = 10 * time.Second

// stopGrace is how long Stop waits after SIGTERM before it kills.
const stopGrace = 5 * time.Second

// Process is one server child process listening on 127.0.0.1; it
// implements bench.Server. Its methods are safe for concurrent use.
type Process struct {
	name, addr, opsAddr string
	argv                []string
	ready               func(ctx context.Context, addr, opsAddr string) error

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	stderr *bytes.Buffer
}

// startServer starts server i of spec from the executable path on free
// 127.0.0.1 ports, working in a fresh directory under dir, and waits until
// it serves. The child gets its own process group, so a Ctrl-C on the
// terminal reaches only the bench, which then stops its children itself.
func startServer(ctx context.Context, spec *bench.ServerSpec, i int, path, dir string) (*Process, error) {
	name := spec.ServerName(i)
	var lastErr error
	for range 3 { // a free port may be taken between FreeAddr and bind
		addr, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		var ops string
		if spec.OpsPort != 0 {
			if ops, err = FreeAddr(); err != nil {
				return nil, err
			}
		}
		wd, err := os.MkdirTemp(dir, name+"-")
		if err != nil {
			return nil, fmt.Errorf("local: %w", err)
		}
		args := spec.Args(bench.ServerArgs{Listen: addr, Ops: ops, Dir: wd})
		p := &Process{name: name, addr: addr, opsAddr: ops, argv: append([]string{path}, args...), ready: spec.Ready}
		if lastErr = p.start(ctx); lastErr == nil {
			return p, nil
		}
	}
	return nil, lastErr
}

// StartProcess starts path with args as a child process named name that
// serves at addr (which args must make it listen on), and waits until addr
// accepts connections. It is for servers whose arguments depend on more
// than one address (a cluster member names its peers).
func StartProcess(ctx context.Context, name, addr, path string, args ...string) (*Process, error) {
	p := &Process{name: name, addr: addr, argv: append([]string{path}, args...)}
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Process) start(ctx context.Context) error {
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("local: starting %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
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

// CPU implements bench.Server: user+system time from /proc/<pid>/stat.
func (p *Process) CPU(context.Context) (time.Duration, string, bool, error) {
	cpu, err := bench.ProcessCPU(p.pid())
	return cpu, "/proc/<pid>/stat (utime+stime)", err == nil, err
}

// Kill implements bench.Server: SIGKILL, then wait for the child to exit.
func (p *Process) Kill(context.Context) error {
	p.signal(syscall.SIGKILL, 0)
	return nil
}

// Stop implements bench.Server: SIGTERM (a paused child is resumed to
// receive it), up to 5s, then SIGKILL.
func (p *Process) Stop(context.Context) error {
	p.stop()
	return nil
}

func (p *Process) stop() { p.signal(syscall.SIGTERM, stopGrace) }

// Restart implements bench.Server: it stops the child if it still runs
// and starts it again with the same arguments on the same address.
func (p *Process) Restart(ctx context.Context) error {
	p.stop()
	return p.start(ctx)
}

// Pause implements bench.Server with SIGSTOP.
func (p *Process) Pause(context.Context) error { return p.send(syscall.SIGSTOP) }

// Unpause implements bench.Server with SIGCONT.
func (p *Process) Unpause(context.Context) error { return p.send(syscall.SIGCONT) }

// Cut implements bench.Server: child processes share the bench's network,
// so it is not supported.
func (p *Process) Cut(context.Context) error {
	return fmt.Errorf("local: cutting %s off the network: %w", p.name, bench.ErrNotSupported)
}

// Restore implements bench.Server; see Cut.
func (p *Process) Restore(context.Context) error {
	return fmt.Errorf("local: restoring %s's network: %w", p.name, bench.ErrNotSupported)
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

// Footprint implements footprint.Reader: the child's memory from /proc.
func (p *Process) Footprint(context.Context) (footprint.Sample, error) {
	return footprint.Process(p.pid())
}

// FileLimits implements sessions.LimitReader: the child's RLIMIT_NOFILE.
func (p *Process) FileLimits(context.Context) (sessions.FileLimits, error) {
	return sessions.ProcessFileLimits(p.pid(), p.name)
}
