package host

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/monolock/monolock-bench/bench"
	"golang.org/x/sys/unix"
)

// RaiseFileLimit raises this process's soft RLIMIT_NOFILE to its hard
// limit (the hard limit itself needs privilege and may be capped by the
// container or sandbox; it is left alone) and returns the limits. The
// limit is inherited by child processes started afterwards, such as a
// local server.
func RaiseFileLimit() (bench.FileLimits, error) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return bench.FileLimits{}, fmt.Errorf("host: getrlimit NOFILE: %w", err)
	}
	l := bench.FileLimits{Process: "bench", SoftBefore: r.Cur, Soft: r.Cur, Hard: r.Max, NrOpen: readNrOpen()}
	if r.Cur < r.Max {
		r.Cur = r.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
			return l, fmt.Errorf("host: raise RLIMIT_NOFILE soft %d to hard %d: %w", l.Soft, r.Max, err)
		}
		l.Soft = r.Max
	}
	l.InUse = openFiles(os.Getpid())
	return l, nil
}

// ProcessFileLimits reads the RLIMIT_NOFILE of process pid (prlimit; a
// local server raises its own after it starts, so read it once ready).
func ProcessFileLimits(pid int, name string) (bench.FileLimits, error) {
	var r unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &r); err != nil {
		// prlimit needs the right to signal the process (a container's
		// process may belong to another user namespace); its
		// /proc/<pid>/limits is world-readable.
		var perr error
		if r.Cur, r.Max, perr = procLimits(pid); perr != nil {
			return bench.FileLimits{}, fmt.Errorf("host: prlimit NOFILE of pid %d: %w (and %w)", pid, err, perr)
		}
	}
	return bench.FileLimits{Process: name, SoftBefore: r.Cur, Soft: r.Cur, Hard: r.Max, InUse: openFiles(pid), NrOpen: readNrOpen()}, nil
}

// procLimits reads the soft and hard "Max open files" of
// /proc/<pid>/limits (procfs's Limits gives the soft limit only).
func procLimits(pid int) (soft, hard uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseLimits(string(b))
}

func parseLimits(s string) (soft, hard uint64, err error) {
	for line := range strings.Lines(s) {
		rest, ok := strings.CutPrefix(line, "Max open files")
		f := strings.Fields(rest)
		if !ok || len(f) < 2 {
			continue
		}
		soft, err1 := strconv.ParseUint(f[0], 10, 64)
		hard, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 == nil && err2 == nil {
			return soft, hard, nil
		}
	}
	return 0, 0, fmt.Errorf("host: no numeric \"Max open files\" line in /proc/<pid>/limits")
}

// readNrOpen reads fs.nr_open; 0 if unreadable.
func readNrOpen() uint64 {
	fs, err := proc()
	if err != nil {
		return 0
	}
	v, err := fs.SysctlStrings("fs.nr_open")
	if err != nil || len(v) != 1 {
		return 0
	}
	n, _ := strconv.ParseUint(v[0], 10, 64)
	return n
}

// openFiles counts the entries of /proc/<pid>/fd; 0 if unreadable.
func openFiles(pid int) int {
	p, err := process(pid)
	if err != nil {
		return 0
	}
	n, err := p.FileDescriptorsLen()
	if err != nil {
		return 0
	}
	return n
}
