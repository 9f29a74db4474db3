package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a component has between SIGTERM and SIGKILL.
const stopGrace = 10 * time.Second

// process is a component started detached by startProcess, found again
// through its pid file.
type process struct {
	pid int
	// start is the process's start time in clock ticks since boot
	// (/proc/<pid>/stat field 22): with the pid it tells the process from
	// a later one that reused its pid.
	start uint64
}

// startProcess starts bin with args as a detached process: in a session
// of its own (Setsid), so that it outlives the command that started it
// and no terminal signal reaches it, with stdin from /dev/null and stdout
// and stderr appended to the component's log file. Its pid file is
// written before startProcess returns.
func startProcess(l layout, name, bin string, args ...string) (process, error) {
	for _, dir := range []string{filepath.Dir(l.logFile(name)), filepath.Dir(l.pidFile(name))} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return process{}, fmt.Errorf("localcluster: %w", err)
		}
	}
	logFile, err := os.OpenFile(l.logFile(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return process{}, fmt.Errorf("localcluster: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = l.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	fmt.Fprintf(logFile, "--- %s %s %s\n", time.Now().UTC().Format(time.RFC3339), bin, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		return process{}, fmt.Errorf("localcluster: start %s: %w", name, err)
	}
	p := process{pid: cmd.Process.Pid}
	p.start, _ = startTicks(p.pid)
	// Reaped here if it ends while this process lives (Up failing, a
	// test's Down); reparented to init, which reaps it, otherwise.
	go cmd.Wait()
	if err := os.WriteFile(l.pidFile(name), []byte(formatPidFile(p)), 0o644); err != nil {
		return process{}, fmt.Errorf("localcluster: %w", err)
	}
	return p, nil
}

// formatPidFile and parsePidFile hold a process as "<pid> <start ticks>".
func formatPidFile(p process) string { return fmt.Sprintf("%d %d\n", p.pid, p.start) }

func parsePidFile(b []byte) (process, error) {
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return process{}, fmt.Errorf("localcluster: pid file %q: want \"<pid> <start>\"", b)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return process{}, fmt.Errorf("localcluster: pid file %q: bad pid", b)
	}
	start, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return process{}, fmt.Errorf("localcluster: pid file %q: bad start time", b)
	}
	return process{pid: pid, start: start}, nil
}

// findProcess returns the component's process when its pid file names a
// process that is still the one started (not a zombie, not a reused pid).
func findProcess(l layout, name string) (process, bool) {
	b, err := os.ReadFile(l.pidFile(name))
	if err != nil {
		return process{}, false
	}
	p, err := parsePidFile(b)
	if err != nil {
		return process{}, false
	}
	return p, p.alive()
}

func (p process) alive() bool {
	start, ok := startTicks(p.pid)
	return ok && start == p.start
}

// startTicks reads a live (not zombie) process's start time from
// /proc/<pid>/stat.
func startTicks(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 is f[19].
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	return start, err == nil
}

// stopProcess ends the component named: SIGTERM, then SIGKILL after
// grace, and waits until it is gone. No pid file, or a process already
// gone, is success.
func stopProcess(ctx context.Context, l layout, name string, grace time.Duration) error {
	p, ok := findProcess(l, name)
	if ok {
		if err := p.stop(ctx, grace); err != nil {
			return fmt.Errorf("localcluster: stop %s: %w", name, err)
		}
	}
	if err := os.Remove(l.pidFile(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("localcluster: %w", err)
	}
	return nil
}

func (p process) stop(ctx context.Context, grace time.Duration) error {
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGTERM, grace}, {syscall.SIGKILL, 5 * time.Second}} {
		if err := syscall.Kill(p.pid, step.sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		deadline := time.Now().Add(step.wait)
		for p.alive() && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
		if !p.alive() {
			return nil
		}
	}
	return fmt.Errorf("pid %d outlived SIGKILL", p.pid)
}
