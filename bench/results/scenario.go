package results

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ScenarioInfo is how a scenario describes its figures to a report: every
// metric it reports, declared once (MetricSpec), and the parameters of
// each of its variants as data (VariantParams), so that a report, the
// claims and compare read what a figure means instead of recovering it
// from a metric's or a variant's spelling. The runner records one per
// scenario run (scenario_info); files written before it existed get
// today's from FillDefaults.
type ScenarioInfo struct {
	// Name is the scenario name of the rows ("latency").
	Name string `json:"name"`
	// Title names the scenario for readers ("Latency (uncontended)");
	// empty prints Name.
	Title string `json:"title,omitempty"`
	// Metrics declares every metric the scenario reports, in the order a
	// report shows them. A metric of the rows that is not declared is
	// shown with its row's unit and better direction.
	Metrics []MetricSpec `json:"metrics"`
	// Variants are the scenario's variants in run order, with their
	// parameters.
	Variants []VariantInfo `json:"variants,omitempty"`
	// Decides are the figures of the scenario that the report's decision
	// section reads (see DecisionFigure).
	Decides []DecisionFigure `json:"decides,omitempty"`
}

// MetricSpec declares one metric of a scenario.
type MetricSpec struct {
	// Name is the metric name of the rows ("acquire_p50").
	Name string `json:"name"`
	// Unit is the unit of its values, as the rows carry it ("us").
	Unit string `json:"unit"`
	// Better is BetterLower, BetterHigher or "" (a count of grants, a
	// parameter recorded beside the figures).
	Better string `json:"better,omitempty"`
	// Label is the figure in words for readers ("acquire p50").
	Label string `json:"label,omitempty"`
	// Kind says what sort of figure it is (KindLatency, ...); "" lets a
	// reader infer it from the unit.
	Kind string `json:"kind,omitempty"`
	// Key marks the figures a report shows in the scenario's one table of
	// key figures (the others go to the appendix).
	Key bool `json:"key,omitempty"`
}

// Kinds of MetricSpec.Kind.
const (
	// KindLatency is a time a client or a waiter waited (us, ms, s).
	KindLatency = "latency"
	// KindRate is a number per second (1/s).
	KindRate = "rate"
	// KindCount is a count of events (count).
	KindCount = "count"
	// KindRatio is a share or an index, usually 0..1 (ratio).
	KindRatio = "ratio"
	// KindVerdict is 1 for yes and 0 for no (bool).
	KindVerdict = "verdict"
	// KindBytes is a size (bytes).
	KindBytes = "bytes"
	// KindCPU is CPU time per unit of work or of wall time (ms, ms/s).
	KindCPU = "cpu"
	// KindParameter is a setting recorded beside the figures (workers, a
	// depth reached, a target rate): shown, never ranked.
	KindParameter = "parameter"
)

var kinds = []string{"", KindLatency, KindRate, KindCount, KindRatio, KindVerdict, KindBytes, KindCPU, KindParameter}

// VariantInfo is one variant of a scenario and its parameters.
type VariantInfo struct {
	Name string `json:"name"`
	VariantParams
}

// VariantParams are what distinguishes a variant, as data. A field a
// variant does not set is zero and omitted.
type VariantParams struct {
	// Workers is the number of concurrent workers (or clients) that take
	// locks.
	Workers int `json:"workers,omitempty"`
	// Keys is the number of keys they share; 0 means one key per worker.
	Keys int `json:"keys,omitempty"`
	// Contended is true when workers wait for each other's locks (the
	// runner fills it from bench.Variant.Contended).
	Contended bool `json:"contended,omitempty"`
	// Load is how the load is offered: LoadClosed, LoadOpen, LoadIdle,
	// LoadQueue or LoadChurn; "" for a scenario of single trials.
	Load string `json:"load,omitempty"`
	// Rate is the offered rate per second of an open-loop variant with a
	// rate common to every contender; RateShare that of one whose rate is
	// a share of each contender's own closed-loop maximum (0.5 = 50%).
	Rate      float64 `json:"rate,omitempty"`
	RateShare float64 `json:"rate_share,omitempty"`
	// Sessions is the number of sessions held at once; SessionsMax marks
	// the variant whose count is the largest the machine's limits allow.
	Sessions    int  `json:"sessions,omitempty"`
	SessionsMax bool `json:"sessions_max,omitempty"`
	// Depth is the number of waiters queued on one held lock.
	Depth int `json:"depth,omitempty"`
	// Lease is the variant's own lease when it differs from the run's
	// ("2s").
	Lease string `json:"lease,omitempty"`
	// Fault is the fault the variant injects (FaultRelease, ...).
	Fault string `json:"fault,omitempty"`
	// Workload is the name of the workload file a variant runs.
	Workload string `json:"workload,omitempty"`
	// GrantBound, in a scenario of trials, is how long a trial's waiter
	// waits for its grant before the trial counts as failed.
	GrantBound *Bound `json:"grant_bound,omitempty"`
}

// Bound is a time limit that scales with the lease: Leases × the lease +
// Plus, at least Min (durations as text, "1s").
type Bound struct {
	Leases float64 `json:"leases,omitempty"`
	Plus   string  `json:"plus,omitempty"`
	Min    string  `json:"min,omitempty"`
}

// At returns the bound at a lease; an unparsable duration counts as 0.
func (b Bound) At(lease time.Duration) time.Duration {
	parse := func(s string) time.Duration {
		d, _ := time.ParseDuration(s)
		return d
	}
	return max(time.Duration(b.Leases*float64(lease))+parse(b.Plus), parse(b.Min))
}

// Size is the variant's size for ClaimRule's PickLargest: its workers,
// else its sessions, else its queue depth.
func (p VariantParams) Size() int {
	switch {
	case p.Workers > 0:
		return p.Workers
	case p.Sessions > 0:
		return p.Sessions
	}
	return p.Depth
}

// Load kinds of VariantParams.Load.
const (
	LoadClosed = "closed" // workers loop acquire → release back to back
	LoadOpen   = "open"   // requests due at a fixed rate, latency from the due time
	LoadIdle   = "idle"   // sessions each hold a lock and only keep it alive
	LoadQueue  = "queue"  // waiters queue on one held lock
	LoadChurn  = "churn"  // many sessions cycle on fewer keys
)

// Faults of VariantParams.Fault.
const (
	FaultRelease         = "release"           // the holder releases (a controlled stop)
	FaultKill            = "kill"              // the holder process is killed (SIGKILL)
	FaultFreeze          = "freeze"            // the holder process is frozen (SIGSTOP)
	FaultHostLoss        = "host-loss"         // the holder's packets are dropped silently
	FaultPause           = "pause"             // the holder is frozen past the lease, then writes
	FaultClockJump       = "clock-jump"        // a server's wall clock steps forward
	FaultClockJumpQuorum = "clock-jump-quorum" // one shared master's clock steps between two quorums
	FaultServerKill      = "server-kill"       // the servers are killed and restarted
	FaultServerStop      = "server-stop"       // the servers are stopped gracefully and restarted
	FaultMinorityDown    = "minority-down"     // the largest minority is killed and kept down
	FaultSplitUnsafe     = "split-unsafe"      // a shared master restarts without its data at once
	FaultSplitDelayed    = "split-delayed"     // the same after one lease
	FaultPrimaryLost     = "primary-lost"      // a standby pair's primary host is lost (its link cut; frozen on loopback), its address moved with the fence
	FaultSwitchNoFence   = "switch-no-fence"   // a standby pair's address moves, the old primary keeps its sessions
	FaultMixed           = "mixed"             // a nemesis injects random faults
)

// Scenario returns the declaration of a scenario, or false.
func (r *Results) Scenario(name string) (ScenarioInfo, bool) {
	i := slices.IndexFunc(r.Scenarios, func(s ScenarioInfo) bool { return s.Name == name })
	if i < 0 {
		return ScenarioInfo{}, false
	}
	return r.Scenarios[i], true
}

// Metric returns the declaration of one of the scenario's metrics, or
// false.
func (s ScenarioInfo) Metric(name string) (MetricSpec, bool) {
	i := slices.IndexFunc(s.Metrics, func(m MetricSpec) bool { return m.Name == name })
	if i < 0 {
		return MetricSpec{}, false
	}
	return s.Metrics[i], true
}

// Variant returns the parameters of one of the scenario's variants, or
// false.
func (s ScenarioInfo) Variant(name string) (VariantParams, bool) {
	i := slices.IndexFunc(s.Variants, func(v VariantInfo) bool { return v.Name == name })
	if i < 0 {
		return VariantParams{}, false
	}
	return s.Variants[i].VariantParams, true
}

// checkScenarios requires named, distinct scenarios whose metrics are
// named once each with a unit, a valid direction and a valid kind.
func checkScenarios(info []ScenarioInfo) error {
	seen := map[string]bool{}
	for i, s := range info {
		switch {
		case s.Name == "":
			return fmt.Errorf("scenario_info[%d]: empty name", i)
		case seen[s.Name]:
			return fmt.Errorf("scenario_info[%d]: %q twice", i, s.Name)
		}
		seen[s.Name] = true
		metrics := map[string]bool{}
		for _, m := range s.Metrics {
			if err := m.check(); err != nil {
				return fmt.Errorf("scenario_info %s: %w", s.Name, err)
			}
			if metrics[m.Name] {
				return fmt.Errorf("scenario_info %s: metric %q twice", s.Name, m.Name)
			}
			metrics[m.Name] = true
		}
		variants := map[string]bool{}
		for _, v := range s.Variants {
			if v.Name == "" || variants[v.Name] {
				return fmt.Errorf("scenario_info %s: variant %q empty or twice", s.Name, v.Name)
			}
			variants[v.Name] = true
		}
	}
	return nil
}

func (m MetricSpec) check() error {
	switch {
	case m.Name == "" || m.Unit == "":
		return fmt.Errorf("metric %q: empty name or unit", m.Name)
	case m.Better != "" && m.Better != BetterLower && m.Better != BetterHigher:
		return fmt.Errorf("metric %s: better %q (want lower, higher or empty)", m.Name, m.Better)
	case !slices.Contains(kinds, m.Kind):
		return fmt.Errorf("metric %s: kind %q", m.Name, m.Kind)
	}
	return nil
}

// ErrUndeclared is wrapped by Declared for a metric its scenario does not
// declare, or a scenario that info does not describe.
var ErrUndeclared = errors.New("results: metric not declared by its scenario")

// Declared checks that every metric of raw is declared by the scenario
// info among info that has raw's scenario, with the same unit; a scenario
// that no info describes is an error too. The scenarios' tests use it to
// hold a scenario's records to its declaration.
func Declared(info []ScenarioInfo, raw Raw) error {
	i := slices.IndexFunc(info, func(s ScenarioInfo) bool { return s.Name == raw.Scenario })
	if i < 0 {
		return fmt.Errorf("%w: scenario %q has no declaration", ErrUndeclared, raw.Scenario)
	}
	for _, m := range raw.Metrics {
		spec, ok := info[i].Metric(m.Name)
		switch {
		case !ok:
			return fmt.Errorf("%w: %s %s", ErrUndeclared, raw.Scenario, m.Name)
		case spec.Unit != m.Unit:
			return fmt.Errorf("%w: %s %s in %q, declared in %q", ErrUndeclared, raw.Scenario, m.Name, m.Unit, spec.Unit)
		}
	}
	return nil
}
