// Package footprint measures the memory and CPU of a lock server, as a
// local child process (/proc) or as a container (the cgroup's counters,
// through the Docker engine's stats as bench/backend/containers/engine reads CPU), and
// turns samples at several session counts into bytes per session.
//
// Which figure to divide: a process's RSS includes its binary's pages,
// which do not grow with sessions, and excludes the kernel's socket
// memory, which does; Anon (the heap and stacks) is the part a session
// adds in user space. A cgroup's usage also counts kernel memory (v2
// always; v1 when kmem accounting is on) but also page cache, hence Anon
// there too. Report what the scenario divides, and say which.
package footprint

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/monolock/monolock-bench/bench"
)

// Memory is one sample of a server's memory, in bytes. A field the
// source cannot give is 0.
type Memory struct {
	// Total is the process's resident set (VmRSS) or the cgroup's usage
	// (v2 memory.current, v1 memory.usage_in_bytes: page cache included).
	Total uint64 `json:"total_bytes"`
	// Anon is anonymous memory: the process's RssAnon, the cgroup's
	// memory.stat anon (v2) or total_rss (v1).
	Anon uint64 `json:"anon_bytes"`
	// PSS is the proportional set size of a process (smaps_rollup Pss),
	// 0 for a cgroup or when smaps_rollup is unreadable.
	PSS uint64 `json:"pss_bytes,omitempty"`
	// Source names where the sample came from: "proc", "cgroup v1",
	// "cgroup v2".
	Source string `json:"source"`
}

// Sample is a server's memory and the CPU time it used so far.
type Sample struct {
	Memory
	CPU time.Duration `json:"cpu_ns"`
}

// Process samples the local process pid: /proc/<pid>/status for VmRSS and
// RssAnon, /proc/<pid>/smaps_rollup for Pss when readable.
func Process(pid int) (Sample, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Sample{}, fmt.Errorf("footprint: %w", err)
	}
	s := Sample{Memory: Memory{Source: "proc"}}
	kb := kbFields(string(b))
	var ok bool
	if s.Total, ok = kb["VmRSS"]; !ok {
		return Sample{}, fmt.Errorf("footprint: /proc/%d/status has no VmRSS (a zombie?)", pid)
	}
	s.Anon = kb["RssAnon"]
	// smaps_rollup needs ptrace read access; without it PSS stays 0.
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		s.PSS = kbFields(string(b))["Pss"]
	}
	if s.CPU, err = bench.ProcessCPU(pid); err != nil {
		return Sample{}, err
	}
	return s, nil
}

// kbFields parses "Name:   123 kB" lines into bytes by name; lines of
// another shape are skipped.
func kbFields(s string) map[string]uint64 {
	out := map[string]uint64{}
	for line := range strings.Lines(s) {
		name, rest, ok := strings.Cut(line, ":")
		f := strings.Fields(rest)
		if !ok || len(f) != 2 || f[1] != "kB" {
			continue
		}
		if n, err := strconv.ParseUint(f[0], 10, 64); err == nil {
			out[name] = n << 10
		}
	}
	return out
}

// cgroupMemory reads a cgroup's usage and memory.stat, which is also what
// the Docker engine reports as memory_stats.usage and .stats. The keys
// tell the version: v2 has anon, v1 has (total_)rss.
func cgroupMemory(usage uint64, stat map[string]uint64) Memory {
	m := Memory{Total: usage}
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

// Cgroup reads the memory of Docker container id from the host's cgroup
// filesystem, as the engine's stats do, in microseconds rather than the
// second a stats call takes: cgroup v1 (cgroupfs or systemd driver) or
// v2. It fails where this process cannot see the container's cgroup (the
// engine on another host); use Container there.
func Cgroup(id string) (Memory, error) {
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
			return Memory{}, fmt.Errorf("footprint: %s: %w", dir, err)
		}
		total, err := strconv.ParseUint(strings.TrimSpace(string(usage)), 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("footprint: %s: %w", dir, err)
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
		return cgroupMemory(total, fields), nil
	}
	return Memory{}, fmt.Errorf("footprint: no memory cgroup of container %s on this host", id)
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
				return 0, fmt.Errorf("footprint: %s: %w", p, err)
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
					return 0, fmt.Errorf("footprint: %s: %w", p, err)
				}
				return time.Duration(us) * time.Microsecond, nil
			}
		}
	}
	return 0, fmt.Errorf("footprint: no cgroup CPU file for container %s on this host", id)
}

// cgroupRoot is where the host's cgroup filesystem is mounted; tests
// point it at a directory of their own.
var cgroupRoot = "/sys/fs/cgroup"

// StatsAPI is the part of the Docker engine client (*client.Client) that
// Container uses.
type StatsAPI interface {
	ContainerStats(ctx context.Context, id string, opts client.ContainerStatsOptions) (client.ContainerStatsResult, error)
}

// Container samples the cgroup of container id through the engine's
// stats, once (no one-second wait): the cgroup's usage, its anonymous
// memory and its CPU time. The engine reads the same cgroup files as
// Cgroup, from the host's side, where this process may not see them.
func Container(ctx context.Context, api StatsAPI, id string) (Sample, error) {
	res, err := api.ContainerStats(ctx, id, client.ContainerStatsOptions{})
	if err != nil {
		return Sample{}, fmt.Errorf("footprint: stats of %s: %w", id, err)
	}
	defer res.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return Sample{}, fmt.Errorf("footprint: stats of %s: %w", id, err)
	}
	return Sample{Memory: cgroupMemory(st.MemoryStats.Usage, st.MemoryStats.Stats), CPU: time.Duration(st.CPUStats.CPUUsage.TotalUsage)}, nil
}

// Reader is implemented by the servers (bench.Server) of the backends that
// can see a server's memory: bench/backend/local (Process) and
// bench/backend/containers (Container).
type Reader interface {
	// Footprint samples the server's memory and CPU time now.
	Footprint(ctx context.Context) (Sample, error)
}
