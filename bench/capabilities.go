package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"
)

// The optional capabilities a backend's servers or deployment may offer
// beyond Server and Deployment. A scenario asks for one with a type
// assertion and, where it is missing, leaves out or skips what needs it
// with the reason: a figure is never guessed.

// ClockShiftedServer is a server whose wall clock the bench can move.
type ClockShiftedServer interface {
	Server
	// ShiftClock makes the server's wall clock run d ahead of the host's
	// (behind for a negative d) from its next clock read on; 0 puts it
	// back. The host's clock is not touched.
	ShiftClock(ctx context.Context, d time.Duration) error
}

// ClockShifter is implemented by deployments that can start extra servers
// of a spec under a wall-clock interposer (clock-jump variants). Such
// servers pay a little for every clock read, so they are started for those
// variants only, never used for speed figures.
type ClockShifter interface {
	// StartClockShifted starts spec.Count() new servers of spec whose wall
	// clocks can be moved one by one; stop removes them again.
	StartClockShifted(ctx context.Context, spec *ServerSpec) (servers []ClockShiftedServer, stop func(), err error)
}

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

// Footprint is a server's memory and the CPU time it used so far.
type Footprint struct {
	Memory
	CPU time.Duration `json:"cpu_ns"`
}

// FootprintReader is implemented by the servers of the backends that can
// see a server's memory: the local backend (from /proc) and the containers
// backend (the container's cgroup). Safe for concurrent use.
type FootprintReader interface {
	// Footprint samples the server's memory and CPU time now.
	Footprint(ctx context.Context) (Footprint, error)
}

// FileLimits is the open-file limit (RLIMIT_NOFILE) of one process and the
// host's ceilings on it, as data for results.json. Every session is one
// open file in the server process, and one in the process holding its
// client connection.
type FileLimits struct {
	// Process names the process ("bench", "server", a container name).
	Process string `json:"process"`
	// SoftBefore is the soft limit before host.RaiseFileLimit; Soft the
	// one in force.
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
		fix = fmt.Sprintf("raise the soft limit to the hard limit %d (host.RaiseFileLimit), or %s", l.Hard, fix)
	}
	if l.NrOpen > 0 {
		fix += fmt.Sprintf("; the host allows at most fs.nr_open = %d", l.NrOpen)
	}
	return fmt.Errorf("bench: %d sessions need %d open files in the %s process (%d per session + %d reserve + %d in use), its RLIMIT_NOFILE is %d (hard %d): run at most %d sessions, or %s",
		sessions, sessions*max(filesPerSession, 0)+reserve+l.InUse, l.Process, max(filesPerSession, 0), reserve, l.InUse, l.Soft, l.Hard, most, fix)
}

// LimitReader is implemented by the servers of the backends that can read
// a server process's open-file limit: the local backend and the
// containers backend where the engine runs on this host. Safe for
// concurrent use.
type LimitReader interface {
	// FileLimits reads the server process's RLIMIT_NOFILE.
	FileLimits(ctx context.Context) (FileLimits, error)
}

// RecordFollower is implemented by the servers of the backends that can
// hand back a server's standard output (containers, local). Safe for
// concurrent use.
type RecordFollower interface {
	// FollowRecord calls line with each line the server's current process
	// writes to its standard output at or after since (every line of a
	// process started later), having first called started with the time
	// from which every line is delivered, and returns nil when that
	// process ends, or ctx's error. line must not keep its slice. It
	// returns ErrNotRecording at once when the deployment was not started
	// to record or the spec has no RecordArgs, and ErrNotRunning when no
	// process runs (killed and not yet restarted).
	FollowRecord(ctx context.Context, since time.Time, started func(from time.Time), line func([]byte)) error
}

// Errors of RecordFollower.FollowRecord.
var (
	ErrNotRecording = errors.New("bench: the server was not started to record its locks (a deployment records only in a run of the chaos scenario alone)")
	ErrNotRunning   = errors.New("bench: the server is not running")
)

// Multihomed is implemented by servers that can be reached at more
// addresses on demand: the containers backend connects the container to
// more networks. A server on loopback needs none: spread its connections
// over source addresses (spreaddial.Loopback). Safe for concurrent use.
type Multihomed interface {
	// Destinations returns n addresses that reach the server, its own
	// first, adding addresses as needed.
	Destinations(ctx context.Context, n int) ([]netip.Addr, error)
}

// VirtualIP is an address of an emulated network that one server's host
// holds at a time, as the virtual IP of a keepalived pair: clients dial
// it, and a failover moves it to another server's host. Safe for
// concurrent use.
type VirtualIP interface {
	// IP is the address.
	IP() netip.Addr
	// Move gives the address to the host at the address to (another
	// server's host of the same network). Without keep it is a takeover:
	// the old host loses the address and every packet to it, of an old
	// connection as of a new one, reaches the new host, whose kernel
	// resets a connection it never had. With keep it is a load
	// balancer's or DNS switch: the connections open before the move keep
	// their host, which keeps the address; new ones reach the new host.
	Move(to netip.Addr, keep bool) error
	// Close takes the address off every host.
	Close() error
}

// VirtualIPServer is implemented by servers that run on a host of an
// emulated network (the local and containers backends with a network
// profile), whose host can hold a virtual IP.
type VirtualIPServer interface {
	// VirtualIP gives a new virtual IP to the server's host; an error
	// wrapping ErrNotSupported when the server is on no emulated host.
	VirtualIP() (VirtualIP, error)
}

// WorkerRunner is implemented by deployments that can run the bench's own
// program on hosts of their own (the kubernetes backend's worker pods),
// to spread a load past what one host's process can open. Safe for
// concurrent use.
type WorkerRunner interface {
	// RunWorkers runs n workers of `monolock-bench worker arg`, each told
	// its index 0..n−1, waits until every one has ended, and returns
	// their outputs by index; an error when one failed.
	RunWorkers(ctx context.Context, n int, arg string) ([]WorkerOutput, error)
}

// WorkerOutput is what one worker of RunWorkers wrote.
type WorkerOutput struct {
	Index int
	// Node is the host the worker ran on.
	Node string
	// Stdout is its standard output.
	Stdout []byte
}

// ClientHoster is implemented by deployments that run client programs on
// hosts of their own and apply faults to them there (the kubernetes
// backend's client pods): a crash or a pause through the deployment, host
// loss as the host's network cut. The runner gives it to every Env as its
// ClientHost, with RemoteClients set.
type ClientHoster interface {
	// ClientHost starts a host named after name for client programs.
	ClientHost(ctx context.Context, name string) (ClientHost, error)
}
