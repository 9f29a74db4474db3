package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

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
		m := CgroupStatMemory(1000, tc.stat)
		if m.Total != 1000 || m.Anon != tc.anon || m.Source != tc.sourc {
			t.Errorf("%s: %+v, want anon %d source %q", tc.name, m, tc.anon, tc.sourc)
		}
	}
}

func TestProcessFootprintSeesAnonymousGrowth(t *testing.T) {
	before, err := ProcessFootprint(os.Getpid())
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
	after, err := ProcessFootprint(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(buf)
	if grew := int64(after.Anon) - int64(before.Anon); grew < 48<<20 {
		t.Fatalf("RssAnon grew %d bytes after touching 64 MiB (before %+v after %+v)", grew, before, after)
	}
	t.Logf("self: before %+v, after %+v", before, after)
}

func TestProcessFootprintOfChildAndGone(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep: %v", err)
	}
	pid := cmd.Process.Pid
	s, err := ProcessFootprint(pid)
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil || s.Total == 0 {
		t.Fatalf("child: %+v, %v", s, err)
	}
	if _, err := ProcessFootprint(pid); err == nil {
		t.Fatal("sampling a reaped process did not fail")
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
	for id, want := range map[string]bench.Memory{
		"v1id": {Total: 9000000, Anon: 4100000, Source: "cgroup v1"},
		"v2id": {Total: 8000, Anon: 3000, Source: "cgroup v2"},
	} {
		if got, err := CgroupMemory(id); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", id, got, err, want)
		}
	}
	if _, err := CgroupMemory("absent"); err == nil {
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
