package bench

import (
	"context"
	"errors"
)

// ErrNoCounters is wrapped when a contender's coordinator counters cannot
// be read: the contender has none, or the deployment does not expose them
// (an external server without its operations address). Scenarios then
// leave the figures out instead of guessing them.
var ErrNoCounters = errors.New("bench: coordinator counters unavailable")

// Coordinator reads the coordinator's own view of the load a contender
// puts on its servers. The bench never estimates these from the client
// side. Its methods are safe for concurrent use.
type Coordinator interface {
	// Counts returns the counters, cumulative and summed over the
	// contender's servers.
	Counts(ctx context.Context) (Counts, error)
	// Close releases the reader's connections.
	Close() error
}

// Counts are cumulative counters of a contender's servers.
type Counts struct {
	// Commands is every command the servers served: the load behind
	// "quiet contention".
	Commands int64
	// Attempts counts acquire attempts, one per client attempt (an
	// attempt that reaches several servers counts once).
	Attempts int64
	// Waiting rises by at least one once a client waits for a held lock:
	// the queued waiters of a server-side queue, or Attempts for a lock
	// whose waiters poll. Handover takes it as "the waiter is ready".
	Waiting int64
	// KeepAlives counts the commands that renew held locks (heartbeats,
	// watchdog extensions, lease keep-alives), summed over the servers; a
	// part of Commands. 0 for a contender whose counters cannot tell.
	KeepAlives int64
}
