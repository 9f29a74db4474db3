package sessions

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultReserve is the open files FileLimits.MaxSessions keeps aside for
// everything but the sessions: a client's pool, the ops listener,
// /metrics scrapes, logs, the Go runtime.
const DefaultReserve = 256

// FileLimits is the open-file limit (RLIMIT_NOFILE) of one process and the
// host's ceilings on it, as data for results.json. Every session is one
// open file in the server process, and one in the process holding its
// client connection.
type FileLimits struct {
	// Process names the process ("bench", "server", a container name).
	Process string `json:"process"`
	// SoftBefore is the soft limit before Raise; Soft the one in force.
	SoftBefore uint64 `json:"soft_before"`
	Soft       uint64 `json:"soft"`
	// Hard is the most the soft limit can be raised to without privilege.
	Hard uint64 `json:"hard"`
	// InUse is the number of files the process had open when read.
	InUse int `json:"in_use"`
	// NrOpen (fs.nr_open) is the most any hard limit can be set to; 0 if
	// unreadable. It is a host sysctl the bench reads and never changes.
	NrOpen uint64 `json:"fs_nr_open,omitempty"`
}

// RaiseFileLimit raises this process's soft RLIMIT_NOFILE to its hard
// limit (the hard limit itself needs privilege and may be capped by the
// container or sandbox; it is left alone) and returns the limits. The
// limit is inherited by child processes started afterwards, such as a
// local server.
func RaiseFileLimit() (FileLimits, error) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return FileLimits{}, fmt.Errorf("sessions: getrlimit NOFILE: %w", err)
	}
	l := FileLimits{Process: "bench", SoftBefore: r.Cur, Soft: r.Cur, Hard: r.Max, NrOpen: readNrOpen()}
	if r.Cur < r.Max {
		r.Cur = r.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
			return l, fmt.Errorf("sessions: raise RLIMIT_NOFILE soft %d to hard %d: %w", l.Soft, r.Max, err)
		}
		l.Soft = r.Max
	}
	l.InUse = openFiles(os.Getpid())
	return l, nil
}

// ProcessFileLimits reads the RLIMIT_NOFILE of process pid (prlimit; a
// local server raises its own after it starts, so read it once ready).
func ProcessFileLimits(pid int, name string) (FileLimits, error) {
	var r unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &r); err != nil {
		// prlimit needs the right to signal the process (a container's
		// process may belong to another user namespace); its
		// /proc/<pid>/limits is world-readable.
		var perr error
		if r.Cur, r.Max, perr = procLimits(pid); perr != nil {
			return FileLimits{}, fmt.Errorf("sessions: prlimit NOFILE of pid %d: %w (and %w)", pid, err, perr)
		}
	}
	return FileLimits{Process: name, SoftBefore: r.Cur, Soft: r.Cur, Hard: r.Max, InUse: openFiles(pid), NrOpen: readNrOpen()}, nil
}

// procLimits reads the soft and hard "Max open files" of
// /proc/<pid>/limits.
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
	return 0, 0, fmt.Errorf("sessions: no numeric \"Max open files\" line in /proc/<pid>/limits")
}

func readNrOpen() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// openFiles counts the entries of /proc/<pid>/fd; 0 if unreadable.
func openFiles(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0
	}
	return len(ents)
}

// MaxSessions is the largest session count whose files fit under the soft
// limit: (Soft − InUse − reserve) / filesPerSession, at least 0. A
// monolock session is 1 file in the server and 1 in its client's process.
// filesPerSession 0 means sessions share connections (a Redis client's
// pool): any count fits (math.MaxInt) once the reserve does.
func (l FileLimits) MaxSessions(filesPerSession, reserve int) int {
	free := int64(l.Soft) - int64(l.InUse) - int64(reserve)
	switch {
	case free <= 0:
		return 0
	case filesPerSession <= 0:
		return math.MaxInt
	}
	return int(free / int64(filesPerSession))
}

// Check returns nil when sessions fit in the limit (see MaxSessions), and
// otherwise an error naming the limit, the largest session count that
// fits and what to change.
func (l FileLimits) Check(sessions, filesPerSession, reserve int) error {
	most := l.MaxSessions(filesPerSession, reserve)
	if sessions <= most {
		return nil
	}
	fix := "raise the hard limit before the bench starts (ulimit -Hn, systemd LimitNOFILE=, docker run --ulimit nofile=N:N)"
	if l.Soft < l.Hard {
		fix = fmt.Sprintf("raise the soft limit to the hard limit %d (RaiseFileLimit), or %s", l.Hard, fix)
	}
	if l.NrOpen > 0 {
		fix += fmt.Sprintf("; the host allows at most fs.nr_open = %d", l.NrOpen)
	}
	return fmt.Errorf("sessions: %d sessions need %d open files in the %s process (%d per session + %d reserve + %d in use), its RLIMIT_NOFILE is %d (hard %d): run at most %d sessions, or %s",
		sessions, sessions*max(filesPerSession, 0)+reserve+l.InUse, l.Process, max(filesPerSession, 0), reserve, l.InUse, l.Soft, l.Hard, most, fix)
}

// LimitReader is implemented by the servers (bench.Server) of the
// backends that can read a server process's open-file limit.
type LimitReader interface {
	// FileLimits reads the server process's RLIMIT_NOFILE.
	FileLimits(ctx context.Context) (FileLimits, error)
}
