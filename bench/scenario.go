package bench

import (
	"context"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// Scenario is one row of the scenario table wired by cmd/monolock-bench. A
// new scenario is a new Scenario value added to that table; nothing
// registers itself.
type Scenario struct {
	// Name is the scenario name in results ("latency", "throughput", ...).
	Name string
	// Floors says whether floor contenders (tcp-floor, redis-floor) take
	// part.
	Floors bool
	// Settings returns every parameter of the scenario for results.json.
	Settings func(quick bool) results.Settings
	// Variants returns the variants to run, shortened when quick.
	Variants func(quick bool) []Variant
}

// Variant is one measured configuration of a scenario, run once per
// contender per repetition.
type Variant struct {
	// Name is the variant name in results ("w1", "distinct-w16", ...).
	Name string
	// Contended is true when workers share keys; contenders marked
	// ContendedOnly run only in contended variants.
	Contended bool
	// Estimate is the expected wall time of one run, for the ETA.
	Estimate time.Duration
	// Run measures one contender once. It returns the repetition's record
	// with Metrics, Counts, Histograms and CPU filled in; the runner fills
	// scenario, contender, variant, repetition and StartedAt. On
	// cancellation it returns ctx.Err().
	Run func(ctx context.Context, env *Env) (results.Raw, error)
}

// Env is what a Variant's Run gets: the contender, its servers and the
// run-wide parameters.
type Env struct {
	Contender  Contender
	Addrs      []string
	Lease      time.Duration
	Deployment Deployment
}

// Open opens a fresh Locker of the contender on its servers.
func (e *Env) Open(ctx context.Context) (Locker, error) {
	return e.Contender.Open(ctx, e.Addrs, e.Lease)
}
