package results

import "encoding/json"

// ChaosSoakSetting is the chaos scenario's setting
// (Parameters.Scenario["chaos"]) present in a soak run (make bench-chaos:
// a fault count per contender given); its value says the schedule.
const ChaosSoakSetting = "soak"

// Chaos is what the chaos scenario keeps of one contender's run beside
// its figures (Raw.Chaos): the fault schedule and what became of each
// fault, the checkers' verdicts with the first violation of each kind and
// its excerpt of history, a timeline for the report, and where the
// history files are. Times are in milliseconds from the history's first
// event.
type Chaos struct {
	// Seed is the schedule's seed: the same seed, lease, clients and
	// counts give the same schedule.
	Seed uint64 `json:"seed"`
	// Schedule is the nemesis's schedule (its config and faults) and
	// Outcomes what became of each fault (applied with its start and end
	// on CLOCK_MONOTONIC, skipped and why, failed), as the nemesis
	// package writes them.
	Schedule json.RawMessage `json:"schedule"`
	Outcomes json.RawMessage `json:"outcomes"`
	// History is the merged history file (JSON lines, bench/README.md's
	// format), relative to the run folder; "" when the run kept no files.
	History string `json:"history,omitempty"`
	// Tokens says whether the contender's grants carried fencing tokens;
	// without, the fenced store rejects every write and its verdict says
	// nothing about the lock.
	Tokens  bool         `json:"tokens"`
	Verdict ChaosVerdict `json:"verdict"`
	// Timeline is what the report draws: every client's acquires and
	// holds as bars, every applied fault as a span.
	Timeline ChaosTimeline `json:"timeline"`
	// Notes say which figures were left out, and why.
	Notes []string `json:"notes,omitempty"`
	// CPU is the CPU time the step's client processes and its servers
	// spent from the clients' start to their stop; nil when not measured
	// (results written before it was).
	CPU *ChaosCPU `json:"cpu,omitempty"`
	// ServerRecord says how the servers' own grants and lease ends were
	// recorded into the history, or, with NoServerRecord, why they were
	// not; both "" in results written before they were recorded.
	ServerRecord   string `json:"server_record,omitempty"`
	NoServerRecord string `json:"no_server_record,omitempty"`
}

// ChaosCPU is the CPU time of one contender's chaos step: its load
// generator (the client processes) and its servers, over Seconds of wall
// time, so that steps run side by side can be judged for CPU starvation.
type ChaosCPU struct {
	Seconds float64 `json:"seconds"`
	// ClientsMS is user+system time of the client processes
	// (/proc/<pid>/stat, read just before they were stopped).
	ClientsMS float64 `json:"clients_ms"`
	// ServerMS is user+system time of the servers the faults acted on;
	// ServerSource says how it was read, "" when it could not be. A server
	// killed and restarted by the schedule counts from its restart only,
	// so ServerMS is a lower bound when the schedule has server kills.
	ServerMS     float64 `json:"server_ms"`
	ServerSource string  `json:"server_source,omitempty"`
}

// ChaosVerdict is every checker's verdict on one contender's history;
// Valid values are "valid", "invalid" and "unknown" (Jepsen's :valid?).
type ChaosVerdict struct {
	Valid      string `json:"valid"`
	Operations int    `json:"operations"`
	// Faults counts the applied faults per kind, the skipped ones per kind
	// with the first reason, and the failed ones.
	Faults      map[string]int    `json:"faults"`
	Skipped     map[string]int    `json:"skipped,omitempty"`
	SkipReasons map[string]string `json:"skip_reasons,omitempty"`
	Failed      int               `json:"failed"`
	// Exclusion is the mutual-exclusion check: Count overlapping pairs of
	// holds, OverlapMS the time two or more clients believed they held
	// the lock, Holds the holds in all.
	Exclusion ChaosCheck `json:"exclusion"`
	// Running counts the overlapping pairs whose earlier holder was
	// running (not frozen by a client pause through the overlap: those are
	// inherent to a lease), FirstRunning is the first of them; nil in
	// results written before the checker told them apart.
	Running      *int            `json:"running,omitempty"`
	FirstRunning *ChaosViolation `json:"first_running,omitempty"`
	Holds        int             `json:"holds"`
	OverlapMS    float64         `json:"overlap_ms"`
	Stores       []ChaosStore    `json:"stores"`
	// Rate is of the applied faults with any violation attributed to them
	// (faults as trials, Wilson 95%); RateByKind per fault kind.
	Rate       ChaosRate            `json:"rate"`
	RateByKind map[string]ChaosRate `json:"rate_by_kind,omitempty"`
	// RunningRate is of the applied faults with a running double holder
	// attributed to them, RunningRateByKind per fault kind; nil in
	// results written before the checker counted them per fault.
	RunningRate       *ChaosRate           `json:"running_rate,omitempty"`
	RunningRateByKind map[string]ChaosRate `json:"running_rate_by_kind,omitempty"`
	// GrantGapMaxMS is the longest time between two consecutive grants
	// (the clients always have a waiter): how long the lock stayed away
	// from every waiter at worst (a frozen holder keeping it, a server
	// down). A normal gap is a hold and a handover.
	GrantGapMaxMS float64 `json:"grant_gap_max_ms"`
	// HolderFaults are the client faults that struck a client while it
	// held the lock, with what became of the lock.
	HolderFaults []ChaosHolderFault `json:"holder_faults,omitempty"`
	// Blame classifies the running overlaps by the servers' own record;
	// nil when the history has none.
	Blame *ChaosBlame `json:"blame,omitempty"`
}

// ChaosBlame counts the running overlaps by whom the servers' record
// lays them on, and gives each one's reason.
type ChaosBlame struct {
	ServerEarly  int `json:"server_early"`
	ClientLate   int `json:"client_late"`
	Both         int `json:"both"`
	Unclassified int `json:"unclassified"`
	// Overlaps say, per running overlap in order, its class and why.
	Overlaps []ChaosBlamed `json:"overlaps,omitempty"`
}

// ChaosBlamed is one running overlap's class.
type ChaosBlamed struct {
	// AtMS is the overlap's start, in ms from the history's start.
	AtMS   float64 `json:"at_ms"`
	First  string  `json:"first"`
	Second string  `json:"second"`
	Blame  string  `json:"blame"`
	Server string  `json:"server,omitempty"`
	Why    string  `json:"why"`
}

// ChaosHolderFault is a client fault (pause, host loss, partition) that
// began while its target held the lock.
type ChaosHolderFault struct {
	ID     int64  `json:"id"`
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// FaultMS is how long the fault lasted.
	FaultMS float64 `json:"fault_ms"`
	// HandoverMS is the time from the fault's start to the next grant to
	// another client; -1 when none came before the history ended.
	HandoverMS float64 `json:"handover_ms"`
	// Kept says no other client was granted the lock until the fault
	// ended: the faulted holder kept it, and the waiters waited, for the
	// whole fault.
	Kept bool `json:"kept"`
}

// ChaosStore is the verdict on one guarded store.
type ChaosStore struct {
	Store  string `json:"store"`
	Valid  string `json:"valid"`
	Fenced bool   `json:"fenced"`
	// Writes counts the writes invoked (register writes and increments),
	// Accepted those the store took.
	Writes   int `json:"writes"`
	Accepted int `json:"accepted"`
	// Linearizable is porcupine's verdict on the register; Visualization
	// its HTML visualisation of a violation, relative to the run folder.
	Linearizable  ChaosCheck `json:"linearizable"`
	Visualization string     `json:"visualization,omitempty"`
	// StaleWrites counts the stale writes the store accepted; Rejected
	// those it rejected (what fencing prevented), UnknownOutcome those of
	// unknown outcome.
	StaleWrites    ChaosCheck `json:"stale_writes"`
	Rejected       int        `json:"rejected"`
	UnknownOutcome int        `json:"unknown_outcome"`
	// LostUpdates counts the counter's lost acknowledged increments, of
	// Acknowledged; Final is its last value read (nil: never read).
	LostUpdates  ChaosCheck           `json:"lost_updates"`
	Acknowledged int                  `json:"acknowledged"`
	Final        *int64               `json:"final,omitempty"`
	Rate         ChaosRate            `json:"rate"`
	RateByKind   map[string]ChaosRate `json:"rate_by_kind,omitempty"`
	// StaleRate is of the applied faults with a stale write this store
	// accepted attributed to them (lost increments left out),
	// StaleRateByKind per fault kind; nil in results written before.
	StaleRate       *ChaosRate           `json:"stale_rate,omitempty"`
	StaleRateByKind map[string]ChaosRate `json:"stale_rate_by_kind,omitempty"`
}

// ChaosCheck is one checker's verdict: how many violations, why it is
// unknown, the violations per fault kind, and the first one.
type ChaosCheck struct {
	Valid  string         `json:"valid"`
	Count  int            `json:"count"`
	Reason string         `json:"reason,omitempty"`
	ByKind map[string]int `json:"by_kind,omitempty"`
	// Unattributed counts the violations during no fault.
	Unattributed int             `json:"unattributed,omitempty"`
	First        *ChaosViolation `json:"first,omitempty"`
}

// ChaosViolation is a checker's first violation with its excerpt of the
// history.
type ChaosViolation struct {
	AtMS float64 `json:"at_ms"`
	What string  `json:"what"`
	// Faults are the ids of the faults (in the schedule) it is attributed
	// to.
	Faults  []int64     `json:"faults,omitempty"`
	Excerpt []ChaosLine `json:"excerpt"`
}

// ChaosLine is one event of an excerpt: the history's line as written,
// marked when it is part of the violation, with the number of events left
// out before it.
type ChaosLine struct {
	AtMS    float64 `json:"at_ms"`
	Process string  `json:"process"`
	Event   string  `json:"event"`
	Mark    bool    `json:"mark,omitempty"`
	Elided  int     `json:"elided,omitempty"`
}

// ChaosRate is k violations in n trials with the Wilson 95% interval.
type ChaosRate struct {
	Violations int     `json:"violations"`
	Trials     int     `json:"trials"`
	Rate       float64 `json:"rate"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
}

// ChaosTimeline is a history drawn as lanes: one per client, and the
// faults across them.
type ChaosTimeline struct {
	SpanMS float64          `json:"span_ms"`
	Lanes  []ChaosLane      `json:"lanes"`
	Faults []ChaosFaultSpan `json:"faults,omitempty"`
}

// ChaosLane is one client's bars in time order.
type ChaosLane struct {
	Client string     `json:"client"`
	Bars   []ChaosBar `json:"bars"`
}

// Kinds of ChaosBar.
const (
	// BarWait: an acquire, from its invocation to its completion.
	BarWait = "wait"
	// BarHold: a hold ended by a release; BarLost: one ended by the lost
	// notice; BarUnended: one the history ended (the client was stopped).
	BarHold    = "hold"
	BarLost    = "lost"
	BarUnended = "unended"
)

// ChaosBar is one bar of a lane.
type ChaosBar struct {
	FromMS float64 `json:"from_ms"`
	ToMS   float64 `json:"to_ms"`
	Kind   string  `json:"kind"`
}

// ChaosFaultSpan is one applied fault, from its start to its end.
type ChaosFaultSpan struct {
	ID     int64   `json:"id"`
	Kind   string  `json:"kind"`
	Target string  `json:"target,omitempty"`
	FromMS float64 `json:"from_ms"`
	ToMS   float64 `json:"to_ms"`
}
