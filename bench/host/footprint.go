// Footprints: the memory and CPU of a lock server, as a local child
// process (/proc) or as a container (the cgroup's files on this host; the
// containers backend falls back to the Docker engine's stats).
//
// Which figure to divide: a process's RSS includes its binary's pages,
// which do not grow with sessions, and excludes the kernel's socket
// memory, which does; Anon (the heap and stacks) is the part a session
// adds in user space. A cgroup's usage also counts kernel memory (v2
// always; v1 when kmem accounting is on) but also page cache, hence Anon
// there too. Report what the scenario divides, and say which.
package host

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// ProcessFootprint samples the local process pid: /proc/<pid>/status for
// VmRSS and RssAnon, /proc/<pid>/smaps_rollup for Pss when readable.
func ProcessFootprint(pid int) (bench.Footprint, error) {
	p, err := process(pid)
	if err != nil {
		return bench.Footprint{}, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return bench.Footprint{}, fmt.Errorf("host: %w", err)
	}
	if st.VmRSS == 0 { // no VmRSS line: a process without memory
		return bench.Footprint{}, fmt.Errorf("host: /proc/%d/status has no VmRSS (a zombie?)", pid)
	}
	s := bench.Footprint{Memory: bench.Memory{Total: st.VmRSS, Anon: st.RssAnon, Source: "proc"}}
	// smaps_rollup needs ptrace read access; without it PSS stays 0.
	if r, err := p.ProcSMapsRollup(); err == nil {
		s.PSS = r.Pss
	}
	if s.CPU, err = ProcessCPU(pid); err != nil {
		return bench.Footprint{}, err
	}
	return s, nil
}

// CgroupStatMemory reads a cgroup's usage and memory.stat, which is also
// what the Docker engine reports as memory_stats.usage and .stats. The
// keys tell the version: v2 has anon, v1 has (total_)rss.
func CgroupStatMemory(usage uint64, stat map[string]uint64) bench.Memory {
	m := bench.Memory{Total: usage}
	if v, ok := stat["anon"]; ok {
		m.Anon, m.Source = v, "cgroup v2"
		return m
	}
	if v, ok := stat["total_rss"]; ok { // hierarchical: children included
		m.Anon, m.Source = v, "cgroup v1"
		return m
	}
	if v, ok := stat["rss"]; ok {
		m.Anon, m.Source = v, "cgroup v1"
		return m
	}
	m.Source = "cgroup"
	return m
}

// CgroupMemory reads the memory of Docker container id from the host's
// cgroup filesystem, as the engine's stats do, in microseconds rather than
// the second a stats call takes: cgroup v1 (cgroupfs or systemd driver) or
// v2. It fails where this process cannot see the container's cgroup (the
// engine on another host).
func CgroupMemory(id string) (bench.Memory, error) {
	for _, dir := range []string{
		cgroupRoot + "/memory/docker/" + id,
		cgroupRoot + "/memory/system.slice/docker-" + id + ".scope",
		cgroupRoot + "/system.slice/docker-" + id + ".scope",
		cgroupRoot + "/docker/" + id,
	} {
		stat, err := os.ReadFile(dir + "/memory.stat")
		if err != nil {
			continue
		}
		usage, err := os.ReadFile(dir + "/memory.usage_in_bytes") // v1
		if err != nil {
			usage, err = os.ReadFile(dir + "/memory.current") // v2
		}
		if err != nil {
			return bench.Memory{}, fmt.Errorf("host: %s: %w", dir, err)
		}
		total, err := strconv.ParseUint(strings.TrimSpace(string(usage)), 10, 64)
		if err != nil {
			return bench.Memory{}, fmt.Errorf("host: %s: %w", dir, err)
		}
		fields := map[string]uint64{}
		for line := range strings.Lines(string(stat)) {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			if n, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				fields[f[0]] = n
			}
		}
		return CgroupStatMemory(total, fields), nil
	}
	return bench.Memory{}, fmt.Errorf("host: no memory cgroup of container %s on this host", id)
}

// CgroupCPU reads a container's CPU usage from the host's cgroup
// filesystem: cgroup v1 (cgroupfs or systemd driver) or v2.
func CgroupCPU(id string) (time.Duration, error) {
	for _, p := range []string{
		cgroupRoot + "/cpuacct/docker/" + id + "/cpuacct.usage",
		cgroupRoot + "/cpu,cpuacct/docker/" + id + "/cpuacct.usage",
		cgroupRoot + "/cpuacct/system.slice/docker-" + id + ".scope/cpuacct.usage",
	} {
		if b, err := os.ReadFile(p); err == nil {
			ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("host: %s: %w", p, err)
			}
			return time.Duration(ns), nil
		}
	}
	for _, p := range []string{
		cgroupRoot + "/system.slice/docker-" + id + ".scope/cpu.stat",
		cgroupRoot + "/docker/" + id + "/cpu.stat",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("host: %s: %w", p, err)
				}
				return time.Duration(us) * time.Microsecond, nil
			}
		}
	}
	return 0, fmt.Errorf("host: no cgroup CPU file for container %s on this host", id)
}

// cgroupRoot is where the host's cgroup filesystem is mounted; tests
// point it at a directory of their own.
var cgroupRoot = "/sys/fs/cgroup"
