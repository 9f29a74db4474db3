// Package local is the local backend of the bench: the measured servers run
// as child processes of the bench on 127.0.0.1 ports — monolock and
// tcp-floor built with `go build` into a temporary directory, redis-server
// from PATH.
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
)

// ErrNoRedisServer is returned when redis-server is not on PATH.
var ErrNoRedisServer = errors.New("local: redis-server not found on PATH (install it, e.g. apt-get install -y redis-server)")

// startTimeout bounds how long a started server may take to accept
// connections.
const startTimeout = 10 * time.Second

// Process is one server child process listening on 127.0.0.1. Its methods
// are safe for concurrent use.
type Process struct {
	// Role is the server role (bench.RoleRedis, ...), Addr its host:port.
	Role, Addr string
	// OpsAddr is the ops HTTP host:port of a monolock server, else empty.
	OpsAddr string

	argv   []string
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	stderr *bytes.Buffer
}

// StartProcess starts path with args and waits until it accepts TCP connections on
// addr. The child gets its own process group, so a Ctrl-C on the terminal
// reaches only the bench, which then stops its children itself.
func StartProcess(ctx context.Context, role, addr, path string, args ...string) (*Process, error) {
	p := &Process{Role: role, Addr: addr, argv: append([]string{path}, args...)}
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
		return fmt.Errorf("local: starting %s: %w", p.Role, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited, p.stderr = cmd, exited, &stderr
	p.mu.Unlock()
	if err := waitListening(ctx, p.Addr, exited); err != nil {
		p.Stop()
		return fmt.Errorf("local: %s (%s) did not start: %w; output: %s", p.Role, p.argv[0], err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// Pid returns the process id of the running child.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// CPU returns the CPU time the child has used (/proc/<pid>/stat).
func (p *Process) CPU() (time.Duration, error) { return bench.ProcessCPU(p.Pid()) }

// Kill sends SIGKILL and waits for the child to exit.
func (p *Process) Kill() { p.signal(syscall.SIGKILL, 0) }

// Stop sends SIGTERM, waits up to 5s, then kills. Safe to call twice.
func (p *Process) Stop() { p.signal(syscall.SIGTERM, 5*time.Second) }

func (p *Process) signal(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	_ = cmd.Process.Signal(sig)
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

// Restart stops the child if it still runs and starts it again with the
// same arguments on the same address.
func (p *Process) Restart(ctx context.Context) error {
	p.Stop()
	return p.start(ctx)
}

// waitListening dials addr until it answers, the process exits, ctx ends or
// startTimeout passes.
func waitListening(ctx context.Context, addr string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("process exited")
		case <-ctx.Done():
			return fmt.Errorf("not listening on %s: %w", addr, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
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

// StartRedis starts redis-server from PATH on a free 127.0.0.1 port, with
// persistence off (no RDB snapshots, no AOF: a lock store needs neither,
// and a fork for a snapshot would add noise), working in dir.
func StartRedis(ctx context.Context, role, dir string) (*Process, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedisServer
	}
	var lastErr error
	for range 3 { // the free port may be taken between FreeAddr and bind
		addr, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		_, port, _ := net.SplitHostPort(addr)
		wd, err := os.MkdirTemp(dir, "redis-"+port+"-")
		if err != nil {
			return nil, fmt.Errorf("local: %w", err)
		}
		p, err := StartProcess(ctx, role, addr, path, RedisArgs(port, wd)...)
		if err == nil {
			return p, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// RedisArgs are the redis-server arguments of the bench: loopback only,
// persistence off, logs to stdout at warning level.
func RedisArgs(port, dir string) []string {
	return []string{
		"--port", port, "--bind", "127.0.0.1", "--protected-mode", "no",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--daemonize", "no", "--loglevel", "warning", "--logfile", "",
	}
}

// StartBinary starts a server binary that takes its listen address as
// flagName (e.g. "-listen") on a free 127.0.0.1 port.
func StartBinary(ctx context.Context, role, path, flagName string, extra ...string) (*Process, error) {
	var lastErr error
	for range 3 {
		addr, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		p, err := StartProcess(ctx, role, addr, path, append([]string{flagName, addr}, extra...)...)
		if err == nil {
			return p, nil
		}
		lastErr = err
	}
	return nil, lastErr
}
