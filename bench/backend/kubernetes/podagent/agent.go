// Package podagent is the small supervisor that runs as the main process
// of every server container the kubernetes backend starts. The server's
// image is the one the containers backend runs; the agent, copied into
// the pod by an init container, starts the server as its child when told
// and applies the bench's faults to it: a kill, a graceful stop, a pause
// (SIGSTOP to the server's process group, as a freezer leaves its sockets
// open), a network cut (the pod's interface down) and a restart in the
// same pod, so the server keeps its pod address.
//
// The bench reaches the agent through the Kubernetes API: it execs
// `monolock-bench pod-agent ctl` in the container (Ctl), which passes one
// request to the agent over a Unix socket in the pod and prints the
// answer. A kill therefore goes where the cluster lets a user act, and
// needs no port of its own on the pod.
package podagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Operations of a Request.
const (
	OpStart   = "start"   // start Argv unless the server runs
	OpKill    = "kill"    // SIGKILL to the server's process group; wait for its exit
	OpStop    = "stop"    // Signal to the server, SIGKILL after Grace; wait for its exit
	OpPause   = "pause"   // SIGSTOP to the server's process group
	OpUnpause = "unpause" // SIGCONT to it
	OpCut     = "cut"     // the pod's network interface down, its routes kept
	OpRestore = "restore" // the interface up again with its routes
	OpSignal  = "signal"  // Signal to every process of the container whose command line is Argv
)

// Request is one order to the agent, a JSON line on its socket.
type Request struct {
	Op string `json:"op"`
	// Argv is the server's command line, program first (OpStart), or
	// that of the processes to signal (OpSignal).
	Argv []string `json:"argv,omitempty"`
	// User is "uid" or "uid:gid", numeric, that the server runs as
	// (OpStart); empty runs it as the agent's user.
	User string `json:"user,omitempty"`
	// Signal and Grace are OpStop's graceful signal and how long it has
	// before SIGKILL; Signal is also OpSignal's.
	Signal syscall.Signal `json:"signal,omitempty"`
	Grace  time.Duration  `json:"grace,omitempty"`
}

// Response is the agent's answer, one JSON line.
type Response struct {
	Error string `json:"error,omitempty"`
	// PID is the server's process after OpStart (0 when none runs).
	PID int `json:"pid,omitempty"`
	// At is the instant just before OpSignal's signal was sent, on the
	// pod's wall clock.
	At time.Time `json:"at,omitzero"`
	// CPU is the container's CPU time (on MetricsPort) and CPUSource
	// where it was read.
	CPU       time.Duration `json:"cpu_ns,omitempty"`
	CPUSource string        `json:"cpu_source,omitempty"`
}

// Serve runs the agent until ctx ends: it listens on the Unix socket at
// path (replacing a stale one), reaps every child (it is PID 1 of its
// container, so orphans of the server come to it), and answers requests
// one at a time. The server's standard output and error are the agent's,
// so the pod's log carries them. On return a running server is killed.
func Serve(ctx context.Context, path string, log *slog.Logger) error {
	os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("podagent: %w", err)
	}
	defer l.Close()
	a := &agent{log: log, exits: map[int]chan struct{}{}}
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	defer signal.Stop(sigchld)
	go func() {
		for range sigchld {
			a.reap()
		}
	}()
	metrics, err := net.Listen("tcp", ":"+strconv.Itoa(MetricsPort))
	if err != nil {
		return fmt.Errorf("podagent: %w", err)
	}
	go http.Serve(metrics, http.HandlerFunc(serveCPU))
	go func() {
		<-ctx.Done()
		l.Close()
		metrics.Close()
	}()
	defer a.killGroup()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("podagent: %w", err)
		}
		a.answer(c)
	}
}

// MetricsPort is where the agent answers GET /cpu with the container's
// CPU time (a Response): the bench reads it before and after every
// measured window, too often for an exec through the API each time.
const MetricsPort = 9723

func serveCPU(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/cpu" {
		http.NotFound(w, r)
		return
	}
	cpu, source, err := containerCPU()
	resp := Response{CPU: cpu, CPUSource: source}
	if err != nil {
		resp.Error = err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// agent is the supervisor's state. Requests are answered one at a time;
// mu guards what the reaper shares.
type agent struct {
	log *slog.Logger

	mu     sync.Mutex
	server int                   // the server's pid, 0 when none runs
	exits  map[int]chan struct{} // closed when that pid is reaped
	routes savedRoutes           // OpCut's, for OpRestore
}

func (a *agent) answer(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	var req Request
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	resp := Response{}
	if err == nil {
		resp, err = a.do(req)
	}
	if err != nil {
		resp.Error = err.Error()
		a.log.Warn("podagent: request failed", "op", req.Op, "err", err)
	}
	out, _ := json.Marshal(resp)
	c.Write(append(out, '\n'))
}

func (a *agent) do(req Request) (Response, error) {
	switch req.Op {
	case OpStart:
		pid, err := a.start(req.Argv, req.User)
		return Response{PID: pid}, err
	case OpKill:
		return Response{}, a.kill()
	case OpStop:
		return Response{}, a.stop(req.Signal, req.Grace)
	case OpPause:
		return Response{}, a.pause()
	case OpUnpause:
		return Response{}, a.signalGroup(syscall.SIGCONT)
	case OpCut:
		return Response{}, a.cut()
	case OpRestore:
		return Response{}, a.restore()
	case OpSignal:
		at, err := signalCommand(req.Argv, req.Signal)
		return Response{At: at}, err
	}
	return Response{}, fmt.Errorf("podagent: unknown operation %q", req.Op)
}

// start runs argv as the server in a process group of its own, unless one
// runs already.
func (a *agent) start(argv []string, user string) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("podagent: start needs a command")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.server != 0 {
		return a.server, nil
	}
	program := argv[0]
	if !strings.Contains(program, "/") {
		var err error
		if program, err = exec.LookPath(program); err != nil {
			return 0, fmt.Errorf("podagent: start: %w", err)
		}
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	if user != "" {
		cred, err := credential(user)
		if err != nil {
			return 0, err
		}
		attr.Credential = cred
	}
	// Not exec.Cmd: the reaper waits for every child, this one included.
	pid, err := syscall.ForkExec(program, argv, &syscall.ProcAttr{
		Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: attr,
	})
	if err != nil {
		return 0, fmt.Errorf("podagent: start %s: %w", argv[0], err)
	}
	a.server = pid
	a.exits[pid] = make(chan struct{})
	a.log.Info("podagent: server started", "pid", pid, "argv", argv)
	return pid, nil
}

// credential parses "uid" or "uid:gid".
func credential(user string) (*syscall.Credential, error) {
	u, g, hasGroup := strings.Cut(user, ":")
	uid, err := strconv.ParseUint(u, 10, 32)
	gid := uid
	if err == nil && hasGroup {
		gid, err = strconv.ParseUint(g, 10, 32)
	}
	if err != nil {
		return nil, fmt.Errorf("podagent: user %q: want a numeric uid[:gid]", user)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// reap waits for every exited child. When the server exits, what is left
// of its group is killed, as a container's processes die with its first.
func (a *agent) reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
		a.mu.Lock()
		if pid == a.server {
			syscall.Kill(-pid, syscall.SIGKILL)
			a.server = 0
			a.log.Info("podagent: server exited", "pid", pid, "status", exitStatus(status))
		}
		if ch, ok := a.exits[pid]; ok {
			close(ch)
			delete(a.exits, pid)
		}
		a.mu.Unlock()
	}
}

func exitStatus(s syscall.WaitStatus) string {
	if s.Signaled() {
		return "signal " + s.Signal().String()
	}
	return "exit " + strconv.Itoa(s.ExitStatus())
}

// running returns the server's pid and the channel closed at its exit, or
// 0 when none runs.
func (a *agent) running() (int, <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.server, a.exits[a.server]
}

// kill is a crash: SIGKILL to the whole group, then wait for the exit.
func (a *agent) kill() error {
	pid, exited := a.running()
	if pid == 0 {
		return nil
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	return waitExit(exited, time.Minute, pid)
}

// stop sends sig to the server (a paused one is resumed so it can act on
// it) and kills its group if it has not exited within grace.
func (a *agent) stop(sig syscall.Signal, grace time.Duration) error {
	pid, exited := a.running()
	if pid == 0 {
		return nil
	}
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	syscall.Kill(pid, sig)
	syscall.Kill(-pid, syscall.SIGCONT)
	select {
	case <-exited:
		return nil
	case <-time.After(grace):
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	return waitExit(exited, time.Minute, pid)
}

func waitExit(exited <-chan struct{}, limit time.Duration, pid int) error {
	select {
	case <-exited:
		return nil
	case <-time.After(limit):
		return fmt.Errorf("podagent: server %d has not exited after %v", pid, limit)
	}
}

func (a *agent) signalGroup(sig syscall.Signal) error {
	pid, _ := a.running()
	if pid == 0 {
		return errors.New("podagent: no server runs")
	}
	if err := syscall.Kill(-pid, sig); err != nil {
		return fmt.Errorf("podagent: %v to server %d: %w", sig, pid, err)
	}
	return nil
}

// pause stops the server's group and returns once its first process is
// stopped, so that the bench's record of the pause follows it.
func (a *agent) pause() error {
	if err := a.signalGroup(syscall.SIGSTOP); err != nil {
		return err
	}
	pid, _ := a.running()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if processState(pid) == 'T' {
			return nil
		}
	}
	return fmt.Errorf("podagent: server %d not stopped a second after SIGSTOP", pid)
}

// signalCommand sends sig to every process whose command line is argv: a
// client the bench started in the container by exec, which is no child
// of the agent. It returns the instant just before the first was
// signalled.
func signalCommand(argv []string, sig syscall.Signal) (time.Time, error) {
	want := []byte(strings.Join(argv, "\x00") + "\x00")
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return time.Time{}, fmt.Errorf("podagent: %w", err)
	}
	var at time.Time
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || !bytes.Equal(cmdline, want) {
			continue
		}
		// The instant before the signal: the killed process's peers may
		// run before the agent does again.
		before := time.Now()
		if err := syscall.Kill(pid, sig); err == nil && at.IsZero() {
			at = before
		}
	}
	if at.IsZero() {
		return at, fmt.Errorf("podagent: no process runs %q", argv)
	}
	return at, nil
}

// processState is the state letter in /proc/<pid>/stat, 0 when unreadable.
func processState(pid int) byte {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
		return data[i+2]
	}
	return 0
}

func (a *agent) killGroup() {
	if pid, _ := a.running(); pid != 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
	}
}
