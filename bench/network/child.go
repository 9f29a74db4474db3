package network

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The bench re-executes itself (/proc/self/exe) for two jobs, marked by
// the first argument: the delay line, kept out of the bench's own Go
// scheduler and garbage collector so that the bench's load cannot stall
// the wire and its CPU is counted apart; and a shim that joins a host's
// namespace and execs a server there (Host.Command).
const (
	lineArg = "__monolock-bench-network-line"
	execArg = "__monolock-bench-network-exec"
)

// ChildMain does the job of a child process this package started and
// exits; in any other process it returns at once. Call it first in main,
// and in TestMain of every test binary that uses a Network.
func ChildMain() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case lineArg:
		if err := serveLine(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case execArg:
		err := execInNamespace(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(127)
	}
}

// execInNamespace joins the namespace at args[0] and execs args[1] with
// the argument vector args[2:].
func execInNamespace(args []string) error {
	if len(args) < 3 {
		return errors.New("network: exec shim: want namespace, program, argv")
	}
	runtime.LockOSThread() // setns and execve must be on one thread
	fd, err := unix.Open(args[0], unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("network: exec shim: %w", err)
	}
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("network: exec shim: join %s: %w", args[0], err)
	}
	unix.Close(fd)
	err = unix.Exec(args[1], args[2:], os.Environ())
	return fmt.Errorf("network: exec %s: %w", args[1], err)
}

// request is one command from the bench to the line; a descriptor may
// travel with it (op "link").
type request struct {
	Op      string      `json:"op"` // config, link, set, path, vip, remove, stats, close
	Index   int         `json:"index,omitempty"`
	Link    linkParams  `json:"link"`
	Fault   Fault       `json:"fault,omitempty"`
	To      int         `json:"to,omitempty"`
	Blocked bool        `json:"blocked,omitempty"`
	Keep    bool        `json:"keep,omitempty"` // vip: established connections keep their host
	Config  *lineConfig `json:"config,omitempty"`
}

type reply struct {
	Err   string     `json:"err,omitempty"`
	Stats *lineStats `json:"stats,omitempty"`
}

// lineProcess is the bench's handle on its line: a child process and a
// SOCK_SEQPACKET control socket to it. Calls are serialised.
type lineProcess struct {
	mu     sync.Mutex
	conn   *net.UnixConn
	pid    int
	exited chan struct{} // closed when the child has exited
	err    error         // why it exited, once exited is closed
}

// startLine starts the line child, hands it the run lock (so that the run
// stays marked live while the line lives) and configures it.
func startLine(lock *runLock, cfg lineConfig) (*lineProcess, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("network: socketpair: %w", err)
	}
	parentEnd := os.NewFile(uintptr(pair[0]), "line-control")
	childEnd := os.NewFile(uintptr(pair[1]), "line-control-child")
	defer childEnd.Close()
	fc, err := net.FileConn(parentEnd)
	parentEnd.Close()
	if err != nil {
		return nil, fmt.Errorf("network: control socket: %w", err)
	}
	conn := fc.(*net.UnixConn)

	p := &lineProcess{conn: conn, exited: make(chan struct{})}
	started := make(chan error, 1)
	// The child's parent-death signal fires when the thread that started
	// it exits, so a thread is kept for it for as long as it runs.
	go func() {
		runtime.LockOSThread()
		defer close(p.exited)
		cmd := &exec.Cmd{
			Path:       "/proc/self/exe",
			Args:       []string{os.Args[0], lineArg},
			Stderr:     os.Stderr,
			ExtraFiles: []*os.File{childEnd, lock.f},
			SysProcAttr: &syscall.SysProcAttr{
				Pdeathsig: syscall.SIGKILL,
				Setpgid:   true, // a Ctrl-C reaches the bench, which closes the line itself
			},
		}
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("network: start the line: %w", err)
			p.err = err
			return
		}
		p.pid = cmd.Process.Pid
		started <- nil
		p.err = cmd.Wait()
	}()
	if err := <-started; err != nil {
		conn.Close()
		return nil, err
	}
	childEnd.Close()
	if _, err := p.call(request{Op: "config", Config: &cfg}, -1); err != nil {
		p.kill()
		return nil, fmt.Errorf("network: the line did not start (the executable must call network.ChildMain first in main and in TestMain): %w", err)
	}
	return p, nil
}

// call sends req (with the descriptor fd unless it is negative) and waits
// for the reply.
func (p *lineProcess) call(req request, fd int) (reply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return reply{}, fmt.Errorf("network: %w", err)
	}
	var oob []byte
	if fd >= 0 {
		oob = unix.UnixRights(fd)
	}
	p.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := p.conn.WriteMsgUnix(b, oob, nil); err != nil {
		return reply{}, fmt.Errorf("network: line %s: %w", req.Op, p.exitReason(err))
	}
	buf := make([]byte, 1<<16)
	n, err := p.conn.Read(buf)
	if err != nil {
		return reply{}, fmt.Errorf("network: line %s: %w", req.Op, p.exitReason(err))
	}
	var r reply
	if err := json.Unmarshal(buf[:n], &r); err != nil {
		return reply{}, fmt.Errorf("network: line %s: reply: %w", req.Op, err)
	}
	if r.Err != "" {
		return r, fmt.Errorf("network: line %s: %s", req.Op, r.Err)
	}
	return r, nil
}

// exitReason adds the child's exit to a control error when it has
// exited.
func (p *lineProcess) exitReason(err error) error {
	select {
	case <-p.exited:
		return fmt.Errorf("the line process exited (%v): %w", p.err, err)
	case <-time.After(100 * time.Millisecond):
		return err
	}
}

// stop asks the line to exit and waits for it, killing it after a while.
func (p *lineProcess) stop() {
	if _, err := p.call(request{Op: "close"}, -1); err != nil {
		p.kill()
	}
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.kill()
	}
	p.conn.Close()
}

func (p *lineProcess) kill() {
	if p.pid > 0 {
		unix.Kill(p.pid, unix.SIGKILL)
	}
	<-p.exited
	p.conn.Close()
}

// serveLine is the line child's main: it reads commands from descriptor
// 3 and runs the loop until told to close or until the bench is gone.
func serveLine() error {
	f := os.NewFile(3, "line-control")
	fc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("network: line: control socket: %w", err)
	}
	conn := fc.(*net.UnixConn)
	// Descriptor 4 is the run lock, held by being open; nothing to do.
	var l *line
	loopDone := make(chan struct{})
	buf := make([]byte, 1<<16)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			return nil // the bench is gone: exiting closes every device
		}
		fd := -1
		if oobn > 0 {
			if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) == 1 {
				if fds, err := unix.ParseUnixRights(&msgs[0]); err == nil && len(fds) == 1 {
					fd = fds[0]
				}
			}
		}
		var req request
		var rep reply
		if err := json.Unmarshal(buf[:n], &req); err != nil {
			rep.Err = err.Error()
		} else if req.Op == "config" {
			if l != nil {
				rep.Err = "configured twice"
			} else if l, err = newLine(*req.Config); err != nil {
				rep.Err = err.Error()
			} else {
				go func() { l.run(); close(loopDone) }()
			}
		} else if l == nil {
			rep.Err = "not configured"
		} else {
			rep = handle(l, req, fd)
		}
		if fd >= 0 && req.Op != "link" {
			unix.Close(fd)
		}
		b, _ := json.Marshal(rep)
		if _, err := conn.Write(b); err != nil {
			return nil
		}
		if req.Op == "close" && rep.Err == "" {
			<-loopDone
			l.close()
			return nil
		}
	}
}

// handle carries out one command on the loop's thread.
func handle(l *line, req request, fd int) reply {
	var rep reply
	if req.Index < 0 || req.Index > maxHosts || req.To < 0 || req.To > maxHosts {
		return reply{Err: fmt.Sprintf("index %d or %d out of range", req.Index, req.To)}
	}
	switch req.Op {
	case "link":
		if fd < 0 {
			return reply{Err: "link without a descriptor"}
		}
		l.do(func(l *line) bool {
			if err := l.setHost(req.Index, fd, req.Link, req.Fault); err != nil {
				rep.Err = err.Error()
			}
			return false
		})
	case "set":
		l.do(func(l *line) bool {
			h := l.hosts[req.Index]
			if h == nil {
				rep.Err = fmt.Sprintf("no link %d", req.Index)
				return false
			}
			h.link, h.fault = req.Link, req.Fault
			return false
		})
	case "path":
		l.do(func(l *line) bool { l.blocked[req.Index][req.To] = req.Blocked; return false })
	case "vip":
		l.do(func(l *line) bool { l.setVIP(req.Index, req.To, req.Keep); return false })
	case "remove":
		l.do(func(l *line) bool { l.removeHost(req.Index); return false })
	case "stats":
		l.do(func(l *line) bool { s := l.snapshot(); rep.Stats = &s; return false })
	case "close":
		l.do(func(l *line) bool { return true })
	default:
		rep.Err = fmt.Sprintf("unknown op %q", req.Op)
	}
	return rep
}
