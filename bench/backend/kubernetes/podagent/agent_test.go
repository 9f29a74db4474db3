package podagent

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAgent runs the agent in the test process and drives a real child
// through every operation but the cut (which would take down the host's
// interface outside a container, and is refused there).
func TestAgent(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, sock, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	ctl := func(req Request) Response {
		t.Helper()
		var resp Response
		var err error
		for range 100 { // until the agent listens
			if resp, err = Ctl(sock, req); err == nil || !strings.Contains(err.Error(), "connect") {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("%s: %v", req.Op, err)
		}
		return resp
	}
	sleep, err := findExecutable("sleep")
	if err != nil {
		t.Skip(err)
	}

	started := ctl(Request{Op: OpStart, Argv: []string{sleep, "60"}})
	if started.PID == 0 {
		t.Fatal("start: no pid")
	}
	if again := ctl(Request{Op: OpStart, Argv: []string{sleep, "60"}}); again.PID != started.PID {
		t.Errorf("a second start ran another server: pid %d, then %d", started.PID, again.PID)
	}
	ctl(Request{Op: OpPause})
	if s := string(processState(started.PID)); s != "T" {
		t.Errorf("paused server is in state %q, want T (stopped)", s)
	}
	ctl(Request{Op: OpUnpause})
	if s := string(processState(started.PID)); s == "T" {
		t.Error("unpaused server is still stopped")
	}
	ctl(Request{Op: OpKill})
	if alive(started.PID) {
		t.Errorf("killed server %d still exists", started.PID)
	}

	// A stop whose signal the server ignores is a kill after the grace.
	trapped := filepath.Join(t.TempDir(), "trapped")
	restarted := ctl(Request{Op: OpStart, Argv: []string{"/bin/sh", "-c", "trap '' TERM; touch " + trapped + "; sleep 60 & wait"}})
	for _, err := os.Stat(trapped); err != nil; _, err = os.Stat(trapped) {
		time.Sleep(5 * time.Millisecond) // until the shell ignores SIGTERM
	}
	begin := time.Now()
	ctl(Request{Op: OpStop, Signal: syscall.SIGTERM, Grace: 300 * time.Millisecond})
	if took := time.Since(begin); took < 300*time.Millisecond {
		t.Errorf("stop returned after %v, before its grace", took)
	}
	if alive(restarted.PID) {
		t.Errorf("stopped server %d still exists", restarted.PID)
	}
	if _, err := Ctl(sock, Request{Op: OpPause}); err == nil {
		t.Error("pause with no server running: no error")
	}
	if _, err := Ctl(sock, Request{Op: OpCut}); err == nil {
		t.Error("cut outside a container: no error")
	}
	// A process the agent did not start (as one exec'd into the
	// container) is found by its command line.
	client := exec.Command(sleep, "61.0123")
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	ctl(Request{Op: OpSignal, Argv: []string{sleep, "61.0123"}, Signal: syscall.SIGKILL})
	// The agent reaps it, as it reaps every orphan of its container.
	for deadline := time.Now().Add(5 * time.Second); alive(client.Process.Pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("signalled client still runs")
		}
	}
	if _, err := Ctl(sock, Request{Op: OpSignal, Argv: []string{sleep, "no-such"}, Signal: syscall.SIGKILL}); err == nil {
		t.Error("signal to no process: no error")
	}
	if cpu, err := ReadCPU(context.Background(), http.DefaultClient, "127.0.0.1"); err != nil || cpu.CPU <= 0 || cpu.CPUSource == "" {
		t.Errorf("cpu on the metrics port: %+v, %v", cpu, err)
	}
}

func findExecutable(name string) (string, error) {
	for _, dir := range []string{"/bin", "/usr/bin"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
