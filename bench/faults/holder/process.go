// Package holder runs a lock holder in its own OS process, so that the
// handover and safety scenarios can release it, kill it (SIGKILL) or
// freeze it (SIGSTOP) the way a real client process ends or stalls, and
// runs the chaos scenario's clients (StartChaos, RunChaos), each a
// process of its own that loops on one lock and records its history.
//
// The child side is Main (the hidden `monolock-bench holder` subcommand,
// which re-executes the bench binary) and Serve; it acquires through the
// same contender code as the bench (the contender table's Open). The
// parent side is Start and Process. They talk over the child's stdin and
// stdout, one line per message (see the line constants).
package holder

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// ErrExited is wrapped by Start and Released when the child exited before
// it said what was expected.
var ErrExited = errors.New("holder: child process exited")

// DefaultCloseGrace is how long Close lets a child release and exit on its
// own before it kills it.
const DefaultCloseGrace = 2 * time.Second

// Command is how to start a holder child: Path with Args, to which Start
// appends the holder flags. For the bench it is the bench binary itself
// (os.Executable()) with Args ["holder"].
type Command struct {
	Path string
	Args []string
	// Env, when non-nil, is the child's environment (exec.Cmd.Env).
	Env []string
	// In, when set, makes the child's command in place of exec.Command:
	// an emulated client host's Command runs the child inside that host.
	In func(ctx context.Context, name string, args ...string) *exec.Cmd
	// Signal, when set with In, delivers the child's signals (Kill,
	// Freeze, Resume) to the program In started with name and args: a
	// host elsewhere whose local process only relays the streams
	// (bench.RemoteClientHost). It returns when the signal was sent, on
	// that host's wall clock.
	Signal func(name string, args []string, sig syscall.Signal) (time.Time, error)
}

// On returns c with its child run on host h, and the child's signals
// delivered there when h runs its programs on another machine
// (bench.RemoteClientHost).
func (c Command) On(h bench.ClientHost) Command {
	c.In = h.Command
	if remote, ok := h.(bench.RemoteClientHost); ok {
		c.Signal = remote.Signal
	}
	return c
}

// Spec says what the holder holds.
type Spec struct {
	// Contender is the contender id in the child's contender table.
	Contender string
	// Addrs are the contender's server addresses, Lease its lease or TTL.
	Addrs []string
	Lease time.Duration
	// Key is the lock key.
	Key string
}

// Process is a running holder child. Its methods are safe for concurrent
// use; Close must be called once the caller is done with it, also after
// Kill.
type Process struct {
	cmd *exec.Cmd
	// remote signals the child where it runs (Command.Signal), nil for a
	// local child; signalledAt is when its last signal was sent.
	remote      func(sig syscall.Signal) (time.Time, error)
	signalMu    sync.Mutex // not closeMu: Close signals while it holds that
	signalledAt time.Time
	stdin       io.WriteCloser
	lines       chan string   // the child's stdout lines; closed at EOF
	exited      chan struct{} // closed once the child is reaped
	stderr      *syncBuffer
	// waitErr is the child's exit (cmd.Wait), set before exited closes.
	waitErr error

	token   uint64
	hasTok  bool
	closeMu sync.Mutex
	closed  bool
	killed  bool // Close killed it after the grace
	// followed, when Follow was called, closes once its handler has
	// seen the child's last line; Close then leaves the lines to it.
	followed chan struct{}
}

// Start starts a holder child and waits until it holds the lock ("held"),
// ctx ends, or the child fails. On error the child is already reaped.
func Start(ctx context.Context, c Command, s Spec) (*Process, error) {
	p, line, err := start(ctx, c, s.args())
	if err != nil {
		return nil, err
	}
	word, rest, _ := strings.Cut(line, " ")
	switch word {
	case lineHeld:
		if rest != "-" {
			p.token, err = strconv.ParseUint(rest, 10, 64)
			p.hasTok = err == nil
		}
	case lineError:
		err = fmt.Errorf("holder: %s", rest)
	default:
		err = fmt.Errorf("holder: unexpected line %q", line)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// args are the flags of the holder subcommand for s.
func (s Spec) args() []string {
	return []string{"-contender", s.Contender, "-addrs", strings.Join(s.Addrs, ","), "-lease", s.Lease.String(), "-key", s.Key}
}

// start starts a child with c and flags and returns it with its first
// stdout line, once that came. On error the child is already reaped.
func start(ctx context.Context, c Command, flags []string) (*Process, string, error) {
	args := append(append([]string{}, c.Args...), flags...)
	cmd := exec.Command(c.Path, args...)
	if c.In != nil {
		// Not ctx: the child lives until Close, as a direct one does.
		cmd = c.In(context.Background(), c.Path, args...)
	}
	cmd.Env = c.Env
	// Own process group: a Ctrl-C on the terminal reaches only the bench,
	// which then ends its children itself. Pdeathsig: a child never
	// outlives a bench that died.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", fmt.Errorf("holder: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", fmt.Errorf("holder: %w", err)
	}
	p := &Process{cmd: cmd, stdin: stdin, lines: make(chan string, 4), exited: make(chan struct{}), stderr: &syncBuffer{}}
	if c.In != nil && c.Signal != nil {
		p.remote = func(sig syscall.Signal) (time.Time, error) { return c.Signal(c.Path, args, sig) }
	}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("holder: starting %s: %w", c.Path, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		// Wait only after stdout is drained (os/exec's rule for pipes).
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	line, err := p.next(ctx)
	if err != nil {
		p.Close()
		return nil, "", err
	}
	return p, line, nil
}

// next returns the child's next stdout line.
func (p *Process) next(ctx context.Context) (string, error) {
	select {
	case line, ok := <-p.lines:
		if !ok {
			<-p.exited
			return "", fmt.Errorf("%w (%v); stderr: %s", ErrExited, p.cmd.ProcessState, p.stderr.tail())
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Token returns the fencing token the child was granted, if the contender
// has tokens.
func (p *Process) Token() (uint64, bool) { return p.token, p.hasTok }

// Release asks the child to release the lock and exit. It returns once the
// request is written; Released waits for the outcome.
func (p *Process) Release() error {
	if _, err := io.WriteString(p.stdin, lineRelease+"\n"); err != nil {
		return fmt.Errorf("holder: asking for release: %w", err)
	}
	return nil
}

// Released waits until the child reports the outcome of a Release: nil, or
// the child's release error.
func (p *Process) Released(ctx context.Context) error {
	line, err := p.next(ctx)
	if err != nil {
		return err
	}
	switch {
	case line == lineReleased:
		return nil
	case strings.HasPrefix(line, lineReleased+" "):
		return fmt.Errorf("holder: %s", line)
	default:
		return fmt.Errorf("holder: unexpected line %q", line)
	}
}

// Send asks the child to write to the guarded stores at addrs as client on
// lock, with its grant's token if it has one; Wrote waits for the answer.
// The request is queued in the pipe, so a frozen child makes the write the
// moment it resumes, without looking at its lock first.
func (p *Process) Send(client, lock string, addrs ...string) error {
	line := strings.Join(append([]string{lineWrite, client, lock}, addrs...), " ")
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		return fmt.Errorf("holder: asking for a write: %w", err)
	}
	return nil
}

// Wrote waits for the answer to a Send: nil, or the child's write error.
func (p *Process) Wrote(ctx context.Context) error {
	line, err := p.next(ctx)
	if err != nil {
		return err
	}
	switch {
	case line == lineWrote:
		return nil
	case strings.HasPrefix(line, lineWrote+" "):
		return fmt.Errorf("holder: %s", line)
	default:
		return fmt.Errorf("holder: unexpected line %q", line)
	}
}

// Resume sends SIGCONT to a frozen child.
func (p *Process) Resume() error { return p.signal(syscall.SIGCONT) }

// Kill sends SIGKILL: the child dies without releasing anything.
func (p *Process) Kill() error { return p.signal(syscall.SIGKILL) }

// Freeze sends SIGSTOP: the child stops where it is (a GC pause, a VM
// freeze), sockets open, heartbeats silent.
func (p *Process) Freeze() error { return p.signal(syscall.SIGSTOP) }

func (p *Process) signal(sig syscall.Signal) error {
	select {
	case <-p.exited:
		return fmt.Errorf("%w before %v", ErrExited, sig)
	default:
	}
	if err := p.deliver(sig); err != nil {
		return fmt.Errorf("holder: %v: %w", sig, err)
	}
	return nil
}

// deliver sends sig to the child, where it runs.
func (p *Process) deliver(sig syscall.Signal) error {
	if p.remote == nil {
		return p.cmd.Process.Signal(sig)
	}
	at, err := p.remote(sig)
	if err == nil {
		// Its host's wall clock, taken onto this process's monotonic one.
		p.signalMu.Lock()
		p.signalledAt = time.Now().Add(-time.Now().Round(0).Sub(at))
		p.signalMu.Unlock()
	}
	return err
}

// SignalledAt returns when the last Kill, Freeze or Resume reached a
// child running elsewhere (Command.Signal), from its host's wall clock,
// or the zero time for a local child, whose signal is sent when the call
// starts.
func (p *Process) SignalledAt() time.Time {
	p.signalMu.Lock()
	defer p.signalMu.Unlock()
	return p.signalledAt
}

// Close ends the child and reaps it: it resumes a frozen child, asks it to
// release and exit (EOF on stdin), waits up to DefaultCloseGrace, then
// kills it. When Close returns the child has exited and been waited for.
// Calling it again does nothing.
func (p *Process) Close() {
	p.closeMu.Lock()
	defer p.closeMu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	_ = p.deliver(syscall.SIGCONT)
	_ = p.stdin.Close()
	t := time.NewTimer(DefaultCloseGrace)
	defer t.Stop()
	lines := p.lines
	if p.followed != nil {
		lines = nil // the follower drains them; none is lost to Close
	}
	for {
		select {
		case <-p.exited:
			if p.followed != nil {
				<-p.followed // its handler has had every line
			}
			return
		case _, ok := <-lines: // drain, so the reader reaches EOF
			if !ok {
				lines = nil
			}
		case <-t.C:
			p.killed = true
			if p.remote != nil {
				_, _ = p.remote(syscall.SIGKILL)
			}
			_ = p.cmd.Process.Kill()
		}
	}
}

// ExitErr reports, after Close, how the child ended: nil when it exited
// with status 0 on its own, else its exit status (or that Close killed it
// after DefaultCloseGrace) with the tail of its stderr.
func (p *Process) ExitErr() error {
	p.closeMu.Lock()
	defer p.closeMu.Unlock()
	select {
	case <-p.exited:
	default:
		return errors.New("holder: child still running")
	}
	switch {
	case p.killed:
		return fmt.Errorf("holder: child killed after not exiting within %v; stderr: %s", DefaultCloseGrace, p.stderr.tail())
	case p.waitErr != nil:
		return fmt.Errorf("holder: child %v; stderr: %s", p.waitErr, p.stderr.tail())
	}
	return nil
}

// syncBuffer keeps the child's stderr for error messages.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// tail returns the last bytes of stderr, enough for an error message.
func (b *syncBuffer) tail() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := bytes.TrimSpace(b.buf.Bytes())
	const keep = 500
	if len(s) > keep {
		s = s[len(s)-keep:]
	}
	return string(s)
}
