package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/monolock/monolock-bench/bench/output/results"
)

// Better directions of a metric (results.Row.Better).
const (
	LowerIsBetter  = "lower"
	HigherIsBetter = "higher"
)

// Scenario is one row of the scenario table wired by cmd/monolock-bench. A
// new scenario is a new Scenario value added to that table; nothing
// registers itself.
type Scenario struct {
	// Name is the scenario name in results ("latency", "throughput", ...).
	Name string
	// Floors says whether floor contenders take part.
	Floors bool
	// Better gives the better direction of each metric the scenario
	// reports (LowerIsBetter, HigherIsBetter); a metric it does not list
	// has none.
	Better map[string]string
	// Settings returns every parameter of the scenario for results.json.
	Settings func(quick bool) results.Settings
	// ContenderSettings, when set, returns what the scenario records in
	// each contender's settings when it is selected: how it treats the
	// contender's servers (the signal of a graceful stop). Default: none.
	ContenderSettings func(c Contender) results.Settings
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
	// Claims, when positive, is the most claims the variant holds at once:
	// the ETA counts it as a skip for a contender whose MaxClaims is lower
	// (the scenario skips it at once, with the reason).
	Claims int
	// Skip, when set, says why the variant does not run a contender, or
	// "" to run it. It is decided from the contender alone, before the
	// run: the ETA leaves the contender out, and the runner records the
	// reason as the contender's record (Skipped) without calling Run.
	// Default: every contender runs. (Run only; an Interleaved variant
	// decides inside.)
	Skip func(c Contender) string
	// MaxRepetitions, when positive, caps the repetitions of this variant
	// below the run's (for variants that take minutes per contender); the
	// report counts the records it has.
	MaxRepetitions int
	// Run measures one contender once. It returns the repetition's record
	// with Metrics, Counts, Histograms and CPU filled in; the runner fills
	// scenario, contender, variant, repetition and StartedAt. When the
	// variant does not apply to the contender (a single server has no
	// minority to lose) or the backend cannot run it (external servers
	// cannot be killed), it returns a record with Skipped saying why and a
	// nil error: the reason is data, and a figure is never faked. On
	// cancellation it returns ctx.Err().
	Run func(ctx context.Context, env *Env) (results.Raw, error)
	// Interleaved, when set, is used instead of Run: it measures every
	// contender of a repetition in one call, so that it can alternate them
	// in short blocks and a slow drift of the machine (other processes,
	// scheduling, frequency) falls on all of them alike. It returns one
	// record and one error per env, in envs' order, each filled in as by
	// Run (a contender that failed does not stop the others, a contender
	// the variant does not apply to gets a record with Skipped); Estimate
	// is then per contender.
	Interleaved func(ctx context.Context, envs []*Env) ([]results.Raw, []error)
}

// Env is what a Variant's Run gets: the contender, its servers and the
// run-wide parameters.
type Env struct {
	Contender Contender
	// Servers are the contender's servers; Addrs their addresses, what
	// Open connects to.
	Servers []Server
	Addrs   []string
	Lease   time.Duration
	// Deployment is the run's deployment, for variants that need more
	// than the contender's servers (e.g. a ClockShifter).
	Deployment Deployment
}

// Open opens a fresh Locker of the contender on its servers.
func (e *Env) Open(ctx context.Context) (Locker, error) {
	l, err := e.Contender.Open(ctx, e.Addrs, e.Lease)
	if err != nil {
		return nil, fmt.Errorf("bench: opening %s: %w", e.Contender.Name, err)
	}
	return l, nil
}

// ServerCPU returns the CPU time the contender's servers used so far (see
// the package function ServerCPU).
func (e *Env) ServerCPU(ctx context.Context) (time.Duration, string, bool, error) {
	return ServerCPU(ctx, e.Servers)
}

// Coordinator opens a reader of the contender's coordinator counters, or
// returns an error wrapping ErrNoCounters.
func (e *Env) Coordinator() (Coordinator, error) {
	if e.Contender.Counters == nil {
		return nil, fmt.Errorf("%w: contender %s has none", ErrNoCounters, e.Contender.Name)
	}
	return e.Contender.Counters(e.Servers)
}
