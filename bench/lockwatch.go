package bench

import (
	"context"
	"time"
)

// LockChangeKind is what a LockChange reports.
type LockChangeKind string

// Kinds of LockChange.
const (
	// LockGranted: the server made Key's holder the owner of the lock.
	LockGranted LockChangeKind = "grant"
	// LockRenewed: the server extended the owner's lease.
	LockRenewed LockChangeKind = "renew"
	// LockEnded: the server ended the owner's hold (release or expiry).
	LockEnded LockChangeKind = "end"
	// WatchStarted: the watch is confirmed; every change is seen until
	// WatchBroken.
	WatchStarted LockChangeKind = "watching"
	// WatchBroken: the watch broke (Err says why); changes are missed until
	// the next WatchStarted.
	WatchBroken LockChangeKind = "unwatched"
)

// LockChange is one change of a lock's key as its server recorded it,
// reported by a contender's LockWatch as soon as it was received.
type LockChange struct {
	// Server names the server (Server.Name), or the cluster when one
	// watch sees the replicated log of all its members.
	Server string
	Kind   LockChangeKind
	// Key is the server's key; Token the grant's fencing token when the
	// server's record carries it (nil without); Revision the server's
	// revision of the change (0 without).
	Key      string
	Token    *uint64
	Revision int64
	// TTL is the lease left, read back right after a grant or renewal;
	// nil when not read.
	TTL *time.Duration
	// Cause is why a hold ended, where the server tells ("del",
	// "expired").
	Cause string
	// Err is why a watch broke.
	Err error
	// At is when the server made the change by its own wall clock, where
	// its record says (monolock's audit log); zero: when it was received.
	// The wall clock is the host's for a server no clock interposer
	// reaches.
	At time.Time
}

// LockWatch watches the lock key on servers until ctx ends, calling
// report for every change in the servers' order, from one goroutine per
// server at most (report is safe for concurrent use). It returns when ctx
// ends, having retried a broken watch until then.
type LockWatch func(ctx context.Context, servers []Server, key string, report func(LockChange))
