package bench

import (
	"context"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// Server roles a Deployment provides. A contender names the role whose
// servers it uses; several contenders may share one role (redis and
// redis-floor both use RoleRedis).
const (
	RoleMonolock = "monolock"  // one monolock server
	RoleRedis    = "redis"     // one Redis
	RoleRedlock  = "redlock"   // five independent Redis masters
	RoleTCPFloor = "tcp-floor" // the do-nothing connection-per-claim server
	// RoleMonolockOps is the ops HTTP address (/metrics) of the monolock
	// server, for scenarios that read the coordinator's own counters
	// (fairness: commands/s; handover: a waiter is queued). A backend that
	// cannot reach it returns no address; those figures are then omitted.
	RoleMonolockOps = "monolock-ops"
)

// Deployment is a set of running servers handed to the runner by a backend
// (containers, local child processes, or external addresses).
type Deployment interface {
	// Addrs returns the host:port addresses of the servers of role, in a
	// stable order, or nil when the deployment has none.
	Addrs(role string) []string
	// ServerCPU returns the cumulative CPU time used so far by all servers
	// of role and how it was read (e.g. "/proc/<pid>/stat"). ok is false
	// when the backend cannot see the servers' CPU (external).
	ServerCPU(ctx context.Context, role string) (cpu time.Duration, source string, ok bool, err error)
	// Describe fills the backend's part of the environment: backend name,
	// network path, images, Docker version, servers.
	Describe(env *results.Environment)
	// Close stops every server the deployment started and removes what it
	// created. It is safe to call more than once.
	Close() error
}
