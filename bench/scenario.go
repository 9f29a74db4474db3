package bench

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// Better directions of a metric (results.MetricSpec.Better).
const (
	LowerIsBetter  = results.BetterLower
	HigherIsBetter = results.BetterHigher
)

// Scenario is one row of the scenario table wired by cmd/monolock-bench. A
// new scenario is a new Scenario value added to that table; nothing
// registers itself.
//
// A scenario declares its figures once: every metric it reports in
// Metrics (name, unit, better direction, label, kind) and the parameters
// of each variant in Variant.Params. The runner records both in
// results.json (scenario_info) and fills each metric's better direction
// from its declaration; report, claims and compare read them instead of
// names. A scenario written with the former map of better directions
// converts mechanically: each entry
//
//	Better: map[string]string{"wait_p99": bench.LowerIsBetter, ...}
//
// becomes one MetricSpec with the unit its records carry,
//
//	Metrics: []results.MetricSpec{{Name: "wait_p99", Unit: "ms", Better: results.BetterLower, Label: "wait p99", Kind: results.KindLatency}, ...}
//
// and every other metric its records carry gets a MetricSpec without
// Better; a variant whose name spells a parameter ("distinct-w16",
// "idle-10k-lease2s") sets it in Params as well (Workers: 16; Sessions:
// 10000, Lease: "2s"). TestScenariosDeclareTheirMetrics (bench/scenarios)
// fails for a record's metric that its scenario does not declare.
type Scenario struct {
	// Name is the scenario name in results ("latency", "throughput", ...).
	Name string
	// Title names the scenario for readers; empty prints Name.
	Title string
	// Floors says whether floor contenders take part.
	Floors bool
	// Metrics declares every metric the scenario reports, in the order a
	// report shows them (see results.MetricSpec).
	Metrics []results.MetricSpec
	// Decides are the figures the report's decision section reads, as
	// data (see results.DecisionFigure).
	Decides []results.DecisionFigure
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
	// ContendedOnly run only in contended variants. The runner records it
	// in the variant's params.
	Contended bool
	// Params are the variant's parameters as data (workers, keys, load,
	// sessions, lease, fault, ...), recorded in results.json; a report
	// reads them, never the variant's name.
	Params results.VariantParams
	// Estimate is the expected wall time of one run, for the ETA.
	Estimate time.Duration
	// EstimateFor, when set, is the expected wall time of one run of
	// contender c instead of Estimate (a window that lasts longer for
	// some contenders).
	EstimateFor func(c Contender) time.Duration
	// Sessions, when positive, is the most sessions (locks held or waited
	// for) the variant has at once: the ETA counts it as a skip for a
	// contender whose MaxSessions is lower
	// (the scenario skips it at once, with the reason).
	Sessions int
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
	// OwnBudget marks a run of the variant on a time budget of its own,
	// apart from the suite's (a soak the user runs alone): the
	// contenders' caps marked SuiteOnly keep the suite's budget and do
	// not apply to it. Default false.
	OwnBudget bool
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

// Info returns what results.json records of the scenario: its
// declaration and the parameters of the variants it runs when quick is
// as given.
func (s Scenario) Info(quick bool) results.ScenarioInfo {
	info := results.ScenarioInfo{Name: s.Name, Title: s.Title, Metrics: slices.Clone(s.Metrics), Decides: slices.Clone(s.Decides)}
	if s.Variants != nil {
		for _, v := range s.Variants(quick) {
			p := v.Params
			p.Contended = p.Contended || v.Contended
			info.Variants = append(info.Variants, results.VariantInfo{Name: v.Name, VariantParams: p})
		}
	}
	return info
}

// EstimateOf is the expected wall time of one run of contender c:
// EstimateFor's when set, else Estimate.
func (v Variant) EstimateOf(c Contender) time.Duration {
	if v.EstimateFor != nil {
		return v.EstimateFor(c)
	}
	return v.Estimate
}

// Better returns the declared better direction of a metric, "" when it
// has none or is not declared.
func (s Scenario) Better(metric string) string {
	for _, m := range s.Metrics {
		if m.Name == metric {
			return m.Better
		}
	}
	return ""
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
	// OutDir is the run's output folder (where results.json goes), for
	// variants that keep files beside it (the chaos histories), which
	// they create in it; "" when the run keeps no files.
	OutDir string
	// ClientHost, set when the servers sit on an emulated network, makes
	// a host of its own on it for a client process (named after name),
	// whose link can fail as a real host's does; the caller closes it.
	ClientHost func(ctx context.Context, name string) (ClientHost, error)
	// RemoteClients says ClientHost's hosts are machines of their own
	// whose faults the deployment applies (the kubernetes backend's client
	// pods, bench.ClientHoster): a scenario runs there every client that
	// takes a fault, for each fault, not for host loss only.
	RemoteClients bool
}

// ClientHost is a host of its own on an emulated network for a client
// process: the process runs in the host's network namespace, so every
// packet between it and the servers crosses the host's link, which can
// drop them, SYNs included (bench/network's Host is one).
type ClientHost interface {
	// Command runs a program inside the host, as exec.CommandContext.
	Command(ctx context.Context, name string, args ...string) *exec.Cmd
	// Drop drops every packet into the host (in) and out of it (out)
	// from now on, those held in the line included; false passes that
	// direction again. Both is host loss.
	Drop(in, out bool) error
	Close() error
}

// RemoteClientHost is a ClientHost whose programs run on another machine
// (a pod): the local process of Command only relays their standard
// streams, so a signal meant for the program goes through Signal.
type RemoteClientHost interface {
	ClientHost
	// Signal sends sig to the program Command started with name and args
	// and returns when it was sent, on the wall clock of the program's
	// host.
	Signal(name string, args []string, sig syscall.Signal) (time.Time, error)
	// BenchHost is the bench host's address as programs on this host
	// reach it, on which the bench listens for them (a store they write
	// to).
	BenchHost() string
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
