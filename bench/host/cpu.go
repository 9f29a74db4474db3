package host

import (
	"fmt"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat. It
// is 100 on every Linux ABI Go supports.
const clockTicks = 100

// ticks converts clock ticks to a duration.
func ticks(t int64) time.Duration { return time.Duration(t) * time.Second / clockTicks }

// ProcessCPU returns the user+system CPU time a process has used so far,
// read from /proc/<pid>/stat.
func ProcessCPU(pid int) (time.Duration, error) {
	p, err := process(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, fmt.Errorf("host: %w", err)
	}
	return ticks(int64(st.UTime + st.STime)), nil
}

// ProcessGroupCPU returns the CPU time the processes of group pgid have
// used so far: user+system time of every live member plus the time of the
// members' children they have waited for (a server that forks a process
// per connection, such as a postmaster, reaps its backends: their time
// moves into its cutime and cstime). Read from /proc/<pid>/stat of every
// process.
func ProcessGroupCPU(pgid int) (time.Duration, error) {
	fs, err := proc()
	if err != nil {
		return 0, err
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return 0, fmt.Errorf("host: %w", err)
	}
	var sum time.Duration
	found := false
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil || st.PGRP != pgid {
			continue // exited meanwhile, or another group
		}
		sum += ticks(int64(st.UTime+st.STime)) + ticks(int64(st.CUTime+st.CSTime))
		found = true
	}
	if !found {
		return 0, fmt.Errorf("host: no process in group %d", pgid)
	}
	return sum, nil
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
