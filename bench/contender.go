package bench

import (
	"context"
	"fmt"
	"net"
	"path"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// Contender is one row of the contender table: everything the bench needs
// to run, describe and render one lock. A contender package returns its
// rows; the core never names one.
type Contender struct {
	// Name is the contender id in results ("monolock", "redis", ...).
	Name string
	// Label is the display name; Family groups contenders in the report
	// ("floor" for the baselines); Colour is the chart colour, "#rrggbb".
	Label, Family, Colour string
	// Server is the spec of the servers Open receives the addresses of.
	Server *ServerSpec
	// Floor marks a baseline: it frames the physics in latency and
	// throughput and takes part only in scenarios that accept floors.
	Floor bool
	// ContendedOnly limits the contender to variants where workers share
	// keys: a waiting-strategy variant (e.g. "fast spin") differs from its
	// base contender only when it has to wait.
	ContendedOnly bool
	// Pitfall marks a deployment run to show a misuse (a session lock
	// through a transaction pooler): measured like the others, never
	// recommended, and never named as its family's best. Default false.
	Pitfall bool
	// Scenarios, when non-empty, are the only scenarios the contender
	// takes part in: a mode of a lock that only those scenarios read (a
	// fencing-token mode for the safety scenario). Default: all.
	Scenarios []string
	// Standby marks an active–passive pair: Server has two replicas, the
	// first the primary and the second a passive standby that holds no
	// state, and the clients know one address. Open gets that one
	// address; a scenario that moves it between the two (failover) reads
	// the servers from Env. Default false.
	Standby bool
	// Settings are every parameter of the contender (TTL rule, retry delay,
	// tries, watchdog, pools, waiting strategy, what its counters read),
	// recorded in results.json. The runner adds the lease.
	Settings results.Settings
	// New connects a Locker to the servers at addrs using lease as the
	// lease or TTL (parity: the same value for every contender), its
	// connections made as o says. Open calls it with no options.
	New func(ctx context.Context, addrs []string, lease time.Duration, o OpenOptions) (Locker, error)
	// ServerSettings, when set, reads the settings known only once the
	// servers run and the lease is set (the servers' own configuration,
	// a TTL derived from the lease); the runner adds them to Settings
	// before the first step, or notes why it could not.
	ServerSettings func(ctx context.Context, servers []Server, lease time.Duration) (results.Settings, error)
	// Dials says New makes its connections with OpenOptions.Dialer (the
	// scale scenario spreads many connections over several addresses); a
	// scenario that needs a dialer skips a contender without, with the
	// reason.
	Dials bool
	// MaxSessions, when positive, is the most sessions (locks held or
	// waited for) one Locker can have at once, and MaxSessionsReason says what bounds it (a
	// connection pool below the server's connection limit): a scenario
	// that needs more skips the contender with the reason at once rather
	// than waiting for sessions that cannot come.
	MaxSessions       int
	MaxSessionsReason string
	// Counters opens a reader of the coordinator's own counters on the
	// contender's servers; nil when it has none. It returns an error
	// wrapping ErrNoCounters when the servers cannot be read.
	Counters func(servers []Server) (Coordinator, error)
	// HeldOnServer, when set, returns those of keys whose locks the
	// servers still hold by their own record, whichever connection or
	// session took them: the safety scenario asks once every client of
	// its pause trials has closed, to find a lock that outlived its
	// holders. Nil: the servers keep no such record apart from the
	// clients' sessions.
	HeldOnServer func(ctx context.Context, servers []Server, keys []string) ([]string, error)
	// Claims are the claims made about this contender, as rules whose
	// Subject is Name; the runner records them in results.json and the
	// report judges them against the run's figures.
	Claims []results.ClaimRule
	// Notes are trade-offs of the design that a run does not measure; the
	// report lists them, labelled as such.
	Notes []string
	// WaitRetry, when set, is the longest a waiter goes without a try
	// while the lock it waits for stays held, at a lease: a waiter woken
	// by a message that also tries again when the TTL it was told has
	// passed (Redisson: at most the lease). The scale scenario's queue
	// window then lasts that long, so that the waiting load it measures
	// includes those tries. Nil: waiters never try without a signal (a
	// server-side queue), or poll far more often than any window.
	WaitRetry func(lease time.Duration) time.Duration
	// Caps are variants the contender does not run, each with its reason:
	// the suite's time budget (a variant it cannot hold, that takes
	// minutes, or that measures what another contender measures). The
	// runner records the reason as the contender's record (Skipped),
	// lists the caps in its settings and leaves them out of the ETA.
	Caps []Cap
	// Repeats give the contender more repetitions of some variants in a
	// full run than the run's (or the variant's cap) allows: where one of
	// its verdicts flipped between two full runs, the repetitions say
	// whether it holds. The runner lists them in the contender's settings.
	Repeats []Repeat
	// WatchLock, when set, records the servers' own grants, renewals and
	// ends of a lock key (the chaos scenario puts them in its history, so
	// that an overlap can be laid on the server or the client), and
	// WatchLockSource says how, for the settings. Nil: NoLockWatch says
	// why the servers' view is not recorded.
	WatchLock                    LockWatch
	WatchLockSource, NoLockWatch string
}

// Cap is one variant a contender does not run, and why.
type Cap struct {
	// Scenario and Variant are path.Match patterns of the scenario's and
	// the variant's names ("scale", "idle-*", "*").
	Scenario, Variant string
	// QuickOnly limits the cap to quick runs.
	QuickOnly bool
	// SuiteOnly limits the cap to the suite's runs, full and quick, whose
	// budget it keeps: a variant run on a budget of its own
	// (Variant.OwnBudget) runs the contender anyway.
	SuiteOnly bool
	// Reason is recorded as the skip reason ("capped: " + Reason).
	Reason string
}

// CapOf returns why c does not run scenario's variant v in a run (quick
// or full), "" when it runs it.
func (c Contender) CapOf(scenario string, v Variant, quick bool) string {
	for _, k := range c.Caps {
		if k.QuickOnly && !quick || k.SuiteOnly && v.OwnBudget {
			continue
		}
		s, _ := path.Match(k.Scenario, scenario)
		if vm, _ := path.Match(k.Variant, v.Name); s && vm {
			return "capped: " + k.Reason
		}
	}
	return ""
}

// String says what the cap skips, for the contender's settings.
func (k Cap) String() string {
	s := k.Scenario + "/" + k.Variant
	if k.QuickOnly {
		s += " (quick)"
	}
	if k.SuiteOnly {
		s += " (suite runs)"
	}
	return s + ": " + k.Reason
}

// Repeat is one variant a contender repeats more often in a full run,
// and why.
type Repeat struct {
	// Scenario and Variant are path.Match patterns, as a Cap's.
	Scenario, Variant string
	// Times is the repetitions the contender gets of the variant.
	Times int
	// Reason says why (the flip it settles).
	Reason string
}

// RepetitionsOf returns how many repetitions c gets of scenario/variant
// in a run whose variant has reps: the Times of its first matching
// Repeat when that is more and the run is full (a quick run keeps its
// one), else reps.
func (c Contender) RepetitionsOf(scenario, variant string, quick bool, reps int) int {
	if quick {
		return reps
	}
	for _, k := range c.Repeats {
		s, _ := path.Match(k.Scenario, scenario)
		if v, _ := path.Match(k.Variant, variant); s && v {
			return max(reps, k.Times)
		}
	}
	return reps
}

// String says what the repeat adds, for the contender's settings.
func (k Repeat) String() string {
	return fmt.Sprintf("%s/%s: %d repetitions in a full run: %s", k.Scenario, k.Variant, k.Times, k.Reason)
}

// Open connects a Locker to the servers at addrs with the client's own
// options (New with none).
func (c Contender) Open(ctx context.Context, addrs []string, lease time.Duration) (Locker, error) {
	return c.New(ctx, addrs, lease, OpenOptions{})
}

// Info returns what results.json records of the contender for rendering.
func (c Contender) Info() results.ContenderInfo {
	label := c.Label
	if label == "" {
		label = c.Name
	}
	return results.ContenderInfo{
		Name: c.Name, Label: label, Family: c.Family, Colour: c.Colour,
		Floor: c.Floor, ContendedOnly: c.ContendedOnly, Pitfall: c.Pitfall, Notes: c.Notes,
	}
}

// Dialer makes connections, as net.Dialer does; bench/load/spreaddial's Dialer
// and monolock.Dialer have this method.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// OpenOptions are what a scenario may ask of Contender.New.
type OpenOptions struct {
	// Dialer, when set, makes every connection of the Locker to the
	// servers. Default: the client's own dialer.
	Dialer Dialer
	// SeparateClients says that each Acquire stands for a client of its
	// own (the scale scenario's sessions): what a client's threads would
	// share and the server serves per client, such as one pub/sub
	// subscription that wakes one thread per message, is not shared
	// between Acquires. Pooled command connections may stay shared.
	// Default: the Acquires are threads of one client.
	SeparateClients bool
}
