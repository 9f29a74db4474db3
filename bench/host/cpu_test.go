package host

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeProc points procRoot at a directory of its own for the test and
// writes files (path relative to /proc: contents) there.
func fakeProc(t *testing.T, files map[string]string) {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := procRoot
	procRoot = root
	t.Cleanup(func() { procRoot = old })
}

// The CPU of a process is utime+stime of its stat line; a group adds its
// members' waited-for children (cutime+cstime). Fields are counted from
// the last ')', since the command name may hold spaces and parentheses.
func TestCPUFromStatLines(t *testing.T) {
	// The kernel writes 52 fields; the tail past field 22 stays zero here.
	tail := strings.Repeat(" 0", 30) + "\n"
	fakeProc(t, map[string]string{
		"42/stat": "42 (redis-server) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 4 0 100 0 0" + tail,
		"43/stat": "43 (a b) (c)) R 1 42 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 5 0 0" + tail,
		"44/stat": "44 (other) S 1 44 44 0 -1 0 0 0 0 0 900 900 0 0 20 0 1 0 5 0 0" + tail,
		"45/stat": "1 (x) S 1 2 3\n",
	})
	for _, tt := range []struct {
		pid  int
		want time.Duration
	}{{42, 2 * time.Second}, {43, 70 * time.Millisecond}, {44, 18 * time.Second}} {
		if got, err := ProcessCPU(tt.pid); err != nil || got != tt.want {
			t.Errorf("ProcessCPU(%d) = %v, %v; want %v", tt.pid, got, err, tt.want)
		}
	}
	for _, pid := range []int{45, 46} { // short line, no process
		if got, err := ProcessCPU(pid); err == nil {
			t.Errorf("ProcessCPU(%d) = %v, want an error", pid, got)
		}
	}
	// Group 42: 42 (2s + children 100ms) and 43 (70ms); 45's short line
	// is skipped.
	if got, err := ProcessGroupCPU(42); err != nil || got != 2170*time.Millisecond {
		t.Errorf("ProcessGroupCPU(42) = %v, %v; want 2.17s", got, err)
	}
}

// TestProcessGroupCPU reads the group of this test process, which holds
// at least the process itself.
func TestProcessGroupCPU(t *testing.T) {
	cpu, err := ProcessGroupCPU(syscall.Getpgrp())
	if err != nil {
		t.Fatal(err)
	}
	self, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if cpu < self {
		t.Errorf("group CPU %v < this process's %v", cpu, self)
	}
	if _, err := ProcessGroupCPU(-5); err == nil {
		t.Error("no error for a group without processes")
	}
}

func TestCPUOfThisProcess(t *testing.T) {
	self0, err := SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	proc0, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until both clocks moved: /proc counts in 10ms ticks.
	deadline := time.Now().Add(10 * time.Second)
	for x := 0; time.Now().Before(deadline); x++ {
		s, _ := SelfCPU()
		p, _ := ProcessCPU(os.Getpid())
		if s > self0 && p > proc0 {
			return
		}
	}
	t.Fatal("neither getrusage nor /proc/<pid>/stat saw the CPU this test burned")
}
