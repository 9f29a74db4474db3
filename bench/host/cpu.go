package host

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat. It
// is 100 on every Linux ABI Go supports.
const clockTicks = 100

// ProcessCPU returns the user+system CPU time a process has used so far,
// read from /proc/<pid>/stat.
func ProcessCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("host: %w", err)
	}
	st, err := parseProcStat(string(data))
	return st.cpu, err
}

// ProcessGroupCPU returns the CPU time the processes of group pgid have
// used so far: user+system time of every live member plus the time of the
// members' children they have waited for (a server that forks a process
// per connection, such as a postmaster, reaps its backends: their time
// moves into its cutime and cstime). Read from /proc/<pid>/stat of every
// process.
func ProcessGroupCPU(pgid int) (time.Duration, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("host: %w", err)
	}
	var sum time.Duration
	found := false
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // exited meanwhile
		}
		st, err := parseProcStat(string(data))
		if err != nil || st.pgrp != pgid {
			continue
		}
		sum += st.cpu + st.children
		found = true
	}
	if !found {
		return 0, fmt.Errorf("host: no process in group %d", pgid)
	}
	return sum, nil
}

// procStat is what the bench reads of a /proc/<pid>/stat line.
type procStat struct {
	pgrp int
	// cpu is utime+stime; children is cutime+cstime (waited-for children).
	cpu, children time.Duration
}

// parseProcStat reads pgrp (field 5), utime and stime (fields 14 and 15)
// and cutime and cstime (16 and 17) of a /proc/<pid>/stat line. The
// command name (field 2) may contain spaces and parentheses, so fields are
// counted from the last ')'.
func parseProcStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("host: malformed /proc stat line %q", s)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); pgrp is field 5, utime field 14 … cstime 17.
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("host: short /proc stat line %q", s)
	}
	var n [5]int64
	for j, field := range []string{f[2], f[11], f[12], f[13], f[14]} {
		v, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("host: /proc stat: %w", err)
		}
		n[j] = v
	}
	tick := func(t int64) time.Duration { return time.Duration(t) * time.Second / clockTicks }
	return procStat{pgrp: int(n[0]), cpu: tick(n[1] + n[2]), children: tick(n[3] + n[4])}, nil
}

// SelfCPU returns the user+system CPU time of the bench process
// (getrusage RUSAGE_SELF, all threads).
func SelfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("host: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
