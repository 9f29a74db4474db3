package host

import (
	"os"
	"syscall"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name, line string
		want       procStat
		wantErr    bool
	}{
		{"plain", "42 (redis-server) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 4 0 100 0 0",
			procStat{pgrp: 42, cpu: 2 * time.Second, children: 100 * time.Millisecond}, false},
		{"spaces and parens in comm", "7 (a b) (c)) R 1 9 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 5 0 0",
			procStat{pgrp: 9, cpu: 70 * time.Millisecond}, false},
		{"no comm", "garbage", procStat{}, true},
		{"short", "1 (x) S 1 2 3", procStat{}, true},
		{"not a number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 x 4 0 0", procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat(tt.line)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseProcStat = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
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
