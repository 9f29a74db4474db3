package analysis

import (
	"fmt"

	"github.com/monolock/monolock-bench/bench/results"
)

// A Condition is what a piece of evidence was measured under: two
// figures are compared only when their conditions match.
type Condition struct {
	Scenario string
	Variant  string
	// Fault is the fault the variant injects ("server-kill",
	// "minority-down", "primary-lost"), "" for none.
	Fault string
	// Sessions is the number of sessions held at once; SessionsMax marks
	// the largest count the machine's limits allow (Sessions then 0).
	Sessions    int
	SessionsMax bool
	// Depth is the number of waiters queued on one held lock.
	Depth int
	// Lease is the variant's own lease when it differs from the run's.
	Lease string
	// Network is the network profile, "" for the machine's own.
	Network string
	// Repetitions is how many repetitions the evidence rests on.
	Repetitions int
}

// conditionOf is the condition of a scenario's variant, as the run
// declares it, with n repetitions.
func (run *Run) conditionOf(scenario, variant string, n int) Condition {
	p := run.params(scenario, variant)
	return Condition{Scenario: scenario, Variant: variant, Fault: p.Fault, Sessions: p.Sessions, SessionsMax: p.SessionsMax, Depth: p.Depth, Lease: p.Lease, Network: run.network(scenario, variant), Repetitions: n}
}

// network returns the network profile of a variant's figures, "" for
// the machine's own.
func (run *Run) network(scenario, variant string) string {
	for _, x := range run.r.Summary {
		if x.Scenario == scenario && x.Variant == variant {
			return x.Network
		}
	}
	return ""
}

// Matches reports whether evidence at c compares with evidence at o:
// the same scenario, fault, session count, lease and network. The
// repetitions may differ (a ranking weighs them).
func (c Condition) Matches(o Condition) bool { return c.Differs(o) == "" }

// Differs says how c differs from o, as the reason a figure at c is not
// comparable with one at o ("tested at 1,000 sessions", "tested with
// another fault: minority-down"), or "" when they match.
func (c Condition) Differs(o Condition) string {
	switch {
	case c.Scenario != o.Scenario:
		return "tested in another scenario: " + c.Scenario
	case c.Fault != o.Fault:
		if c.Fault == "" {
			return "tested without a fault"
		}
		return "tested with another fault: " + c.Fault
	case c.SessionsMax != o.SessionsMax || c.Sessions != o.Sessions:
		if c.SessionsMax {
			return "tested at the largest session count"
		}
		return fmt.Sprintf("tested at %s sessions", results.Num(float64(c.Sessions)))
	case c.Depth != o.Depth:
		if c.Depth == 1 {
			return "tested with 1 waiter queued"
		}
		return fmt.Sprintf("tested with %s waiters queued", results.Num(float64(c.Depth)))
	case c.Lease != o.Lease:
		return "tested at lease " + c.Lease
	case c.Network != o.Network:
		if c.Network == "" {
			return "tested without an emulated network"
		}
		return "tested on network " + c.Network
	case c.Variant != o.Variant:
		return "tested in " + c.Variant
	}
	return ""
}
