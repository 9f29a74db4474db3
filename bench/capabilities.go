package bench

import (
	"context"
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
