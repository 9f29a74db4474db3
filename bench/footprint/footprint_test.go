package footprint

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		name             string
		pts              []Point
		slope, intercept float64
		r2               float64
		err              error
	}{
		{"exact line", []Point{{0, 10e6}, {1000, 14e6}, {2000, 18e6}}, 4000, 10e6, 1, nil},
		{"two points", []Point{{1000, 5}, {3000, 9}}, 0.002, 3, 1, nil},
		{"flat", []Point{{1, 7}, {2, 7}, {3, 7}}, 0, 7, 1, nil},
		{"noisy", []Point{{0, 1}, {1, 3}, {2, 2}, {3, 4}}, 0.8, 1.3, 0.64, nil},
		{"order does not matter", []Point{{2000, 18e6}, {0, 10e6}, {1000, 14e6}}, 4000, 10e6, 1, nil},
		{"negative slope", []Point{{0, 4}, {2, 0}}, -2, 4, 1, nil},
		{"one point", []Point{{1000, 5}}, 0, 0, 0, ErrTooFewPoints},
		{"none", nil, 0, 0, 0, ErrTooFewPoints},
		{"same X", []Point{{1000, 5}, {1000, 6}}, 0, 0, 0, ErrTooFewPoints},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Fit(tc.pts)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			if !near(l.Slope, tc.slope) || !near(l.Intercept, tc.intercept) || !near(l.R2, tc.r2) || l.N != len(tc.pts) {
				t.Fatalf("Fit = %+v, want slope %v intercept %v r2 %v", l, tc.slope, tc.intercept, tc.r2)
			}
		})
	}
	if _, err := Fit([]Point{{0, 1}, {1, math.NaN()}}); err == nil {
		t.Error("Fit accepted NaN")
	}
}

func TestPerSession(t *testing.T) {
	for _, tc := range []struct {
		empty, atC uint64
		c          int
		want       float64
	}{
		{8 << 20, 8<<20 + 4096*1000, 1000, 4096},
		{10, 10, 5, 0},
		{1000, 900, 100, -1},
	} {
		if got := PerSession(tc.empty, tc.atC, tc.c); got != tc.want {
			t.Errorf("PerSession(%d, %d, %d) = %v, want %v", tc.empty, tc.atC, tc.c, got, tc.want)
		}
	}
	if !math.IsNaN(PerSession(1, 2, 0)) {
		t.Error("PerSession at c=0 is not NaN")
	}
}

func TestKBFields(t *testing.T) {
	got := kbFields("Name:\tx\nVmRSS:\t    2036 kB\nRssAnon:\t 164 kB\nThreads:\t1\nPss:  221 kB\n")
	want := map[string]uint64{"VmRSS": 2036 << 10, "RssAnon": 164 << 10, "Pss": 221 << 10}
	if len(got) != len(want) {
		t.Fatalf("kbFields = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
}

func TestCgroupMemory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stat  map[string]uint64
		anon  uint64
		sourc string
	}{
		{"v2", map[string]uint64{"anon": 300, "file": 500, "sock": 40}, 300, "cgroup v2"},
		{"v1 hierarchical", map[string]uint64{"rss": 100, "total_rss": 200, "cache": 9}, 200, "cgroup v1"},
		{"v1 flat", map[string]uint64{"rss": 100, "cache": 9}, 100, "cgroup v1"},
		{"unknown", map[string]uint64{"x": 1}, 0, "cgroup"},
		{"none", nil, 0, "cgroup"},
	} {
		m := cgroupMemory(1000, tc.stat)
		if m.Total != 1000 || m.Anon != tc.anon || m.Source != tc.sourc {
			t.Errorf("%s: %+v, want anon %d source %q", tc.name, m, tc.anon, tc.sourc)
		}
	}
}

func TestProcessSeesAnonymousGrowth(t *testing.T) {
	before, err := Process(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if before.Total == 0 || before.Anon == 0 || before.Source != "proc" {
		t.Fatalf("sample %+v", before)
	}
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1 // touch every page: resident only once written
	}
	after, err := Process(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(buf)
	if grew := int64(after.Anon) - int64(before.Anon); grew < 48<<20 {
		t.Fatalf("RssAnon grew %d bytes after touching 64 MiB (before %+v after %+v)", grew, before, after)
	}
	t.Logf("self: before %+v, after %+v", before, after)
}

func TestProcessOfChildAndGone(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep: %v", err)
	}
	pid := cmd.Process.Pid
	s, err := Process(pid)
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil || s.Total == 0 {
		t.Fatalf("child: %+v, %v", s, err)
	}
	if _, err := Process(pid); err == nil {
		t.Fatal("sampling a reaped process did not fail")
	}
}

// fakeStats answers ContainerStats with a fixed engine response.
type fakeStats struct{ body string }

func (f fakeStats) ContainerStats(context.Context, string, client.ContainerStatsOptions) (client.ContainerStatsResult, error) {
	return client.ContainerStatsResult{Body: io.NopCloser(strings.NewReader(f.body))}, nil
}

func TestContainerFromEngineStats(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Sample
	}{
		{"v1", `{"cpu_stats":{"cpu_usage":{"total_usage":1500000000}},"memory_stats":{"usage":9000000,"stats":{"total_rss":4000000,"rss":4000000,"cache":5000000}}}`,
			Sample{Memory: Memory{Total: 9000000, Anon: 4000000, Source: "cgroup v1"}, CPU: 1500000000}},
		{"v2", `{"cpu_stats":{"cpu_usage":{"total_usage":42}},"memory_stats":{"usage":8000,"stats":{"anon":3000,"file":4000}}}`,
			Sample{Memory: Memory{Total: 8000, Anon: 3000, Source: "cgroup v2"}, CPU: 42}},
	} {
		got, err := Container(context.Background(), fakeStats{tc.body}, "id")
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if _, err := Container(context.Background(), fakeStats{"{"}, "id"); err == nil {
		t.Error("truncated stats did not fail")
	}
}

func TestCgroupFromHostFiles(t *testing.T) {
	root := t.TempDir()
	defer func(r string) { cgroupRoot = r }(cgroupRoot)
	cgroupRoot = root
	write := func(dir, name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("memory/docker/v1id", "memory.usage_in_bytes", "9000000\n")
	write("memory/docker/v1id", "memory.stat", "cache 5000000\nrss 4000000\ntotal_rss 4100000\n")
	write("system.slice/docker-v2id.scope", "memory.current", "8000\n")
	write("system.slice/docker-v2id.scope", "memory.stat", "anon 3000\nfile 4000\n")
	for id, want := range map[string]Memory{
		"v1id": {Total: 9000000, Anon: 4100000, Source: "cgroup v1"},
		"v2id": {Total: 8000, Anon: 3000, Source: "cgroup v2"},
	} {
		if got, err := Cgroup(id); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", id, got, err, want)
		}
	}
	if _, err := Cgroup("absent"); err == nil {
		t.Error("a container without a cgroup here did not fail")
	}
	write("cpuacct/docker/v1id", "cpuacct.usage", "1500000000\n")
	write("system.slice/docker-v2id.scope", "cpu.stat", "usage_usec 42\nuser_usec 40\n")
	for id, want := range map[string]time.Duration{"v1id": 1500 * time.Millisecond, "v2id": 42 * time.Microsecond} {
		if got, err := CgroupCPU(id); err != nil || got != want {
			t.Errorf("CPU of %s: %v, %v; want %v", id, got, err, want)
		}
	}
	if _, err := CgroupCPU("absent"); err == nil {
		t.Error("CPU of a container without a cgroup here did not fail")
	}
}
