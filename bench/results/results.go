// Package results is the versioned schema of results.json, the data every
// benchmark report is rendered from.
//
// A run writes one Results value. Everything a report shows must be
// derivable from it: the environment, every parameter (including every
// retry, TTL and waiting-strategy setting of every contender), one Raw
// record per scenario × contender × variant × repetition with encoded
// HdrHistogram snapshots, and the tidy Summary (one Row per figure, median,
// min and max across repetitions).
//
// The schema only grows: new fields are added with omitempty, new scenarios
// bring new scenario/variant/metric names. A change that would make an old
// reader misread a file bumps SchemaVersion.
package results

import (
	"time"
)

// SchemaVersion is the version of the schema written by this package. Load
// rejects files with a higher version.
const SchemaVersion = 1

// Results is the content of one results.json.
type Results struct {
	SchemaVersion int    `json:"schema_version"`
	RunID         string `json:"run_id"`
	// Partial is true when the run stopped early (Ctrl-C, a failed
	// contender); PartialReason says why.
	Partial       bool        `json:"partial"`
	PartialReason string      `json:"partial_reason,omitempty"`
	StartedAt     time.Time   `json:"started_at"`
	FinishedAt    time.Time   `json:"finished_at"`
	Environment   Environment `json:"environment"`
	Parameters    Parameters  `json:"parameters"`
	// Summary holds one row per figure; see Row.
	Summary []Row `json:"summary"`
	// Raw holds one record per scenario × contender × variant × repetition.
	Raw []Raw `json:"raw"`
	// Notes are free-form remarks of the run (contenders not run, warnings)
	// that a report should show under "method and caveats".
	Notes []string `json:"notes,omitempty"`
	// Contenders describes each contender of the run (label, family,
	// colour, floor), so that a report groups, colours and judges them
	// without knowing any by name. Absent in files written before it
	// existed; see FillDefaults.
	Contenders []ContenderInfo `json:"contender_info,omitempty"`
	// Claims are the claims the run's contenders make, as declarative
	// rules a report evaluates against the figures. Absent in files
	// written before it existed; see FillDefaults.
	Claims []ClaimRule `json:"claim_rules,omitempty"`
	// Scenarios declares each scenario's metrics and variant parameters
	// (see ScenarioInfo). Absent in files written before it existed; see
	// FillDefaults.
	Scenarios []ScenarioInfo `json:"scenario_info,omitempty"`
	// Networks are the network profiles the run measured under, in run
	// order, with their asked and measured paths (see NetworkRun). Absent
	// in files written before it existed, and for a run on loopback only.
	Networks []NetworkRun `json:"networks,omitempty"`
}

// ContenderInfo is how a contender describes itself to a report.
type ContenderInfo struct {
	// Name is the contender id used in every Row and Raw ("monolock").
	Name string `json:"name"`
	// Label is a short human description ("monolock, warm spare
	// connections"); empty means Name says it all.
	Label string `json:"label,omitempty"`
	// Family groups related contenders in tables ("monolock", "redis",
	// "etcd", "postgres", "floor"); contenders of one family sit together.
	Family string `json:"family,omitempty"`
	// Colour is the chart colour as "#rrggbb"; empty lets the report pick
	// one from its palette.
	Colour string `json:"colour,omitempty"`
	// Floor marks a baseline rather than a lock: shown apart (after the
	// locks, dashed in charts) and never judged as a lock.
	Floor bool `json:"floor,omitempty"`
	// ContendedOnly marks a contender that runs only the variants where
	// workers share keys (a waiting-strategy variant).
	ContendedOnly bool `json:"contended_only,omitempty"`
	// Pitfall marks a deployment run to show a misuse: the decision
	// never picks it nor names it as its family's best.
	Pitfall bool `json:"pitfall,omitempty"`
	// Notes are trade-offs of the contender's design that a benchmark run
	// does not measure (availability, fencing, operations); a report
	// lists them, labelled as not measured, under "which lock when".
	Notes []string `json:"notes,omitempty"`
}

// Environment describes the machine and the servers a run measured.
type Environment struct {
	CPUModel   string `json:"cpu_model"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Kernel     string `json:"kernel"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	GoVersion  string `json:"go_version"`
	// DockerVersion is the engine version, empty unless the containers
	// backend ran.
	DockerVersion string `json:"docker_version,omitempty"`
	// Backend is "containers", "local", "external" or "kubernetes".
	Backend string `json:"backend"`
	// NetworkPath says how the bench reached the servers, e.g.
	// "loopback 127.0.0.1" or "bridge network, container IP, no docker-proxy".
	NetworkPath string  `json:"network_path"`
	Images      []Image `json:"images,omitempty"`
	// Servers lists the address of every server the run measured.
	Servers []Server `json:"servers,omitempty"`
	// Command is the command line of the run.
	Command []string `json:"command,omitempty"`
	// Sysctls are the kernel settings that shape connection-heavy figures
	// (net.ipv4.tcp_tw_reuse, net.ipv4.ip_local_port_range, ...).
	Sysctls map[string]string `json:"sysctls,omitempty"`
}

// Image is one container image a run used.
type Image struct {
	Role string `json:"role"` // "monolock", "redis", "tcp-floor"
	Ref  string `json:"ref"`  // image reference, e.g. "monolock-bench/monolock:3f2a…"
	// Source says where the image came from, e.g. "built from the static
	// binary (FROM scratch)" or "host redis-server packaged into scratch".
	Source string `json:"source"`
}

// Server is one measured server process.
type Server struct {
	Role    string `json:"role"` // "monolock", "redis", "redlock-1" … "redlock-5", "tcp-floor"
	Address string `json:"address"`
	// Version of the server software when known.
	Version string `json:"version,omitempty"`
}

// Parameters records every setting of a run, so a report can state it and a
// comparison can tell like from unlike.
type Parameters struct {
	Quick       bool     `json:"quick"`
	Repetitions int      `json:"repetitions"`
	Scenarios   []string `json:"scenarios"`
	Contenders  []string `json:"contenders"`
	// Scenario holds the settings of each scenario, by scenario name.
	Scenario map[string]Settings `json:"scenario"`
	// Contender holds the settings of each contender, by contender id: lease
	// or TTL, retry delays and tries, watchdog interval, waiting strategy,
	// pool sizes.
	Contender map[string]Settings `json:"contender"`
}

// Settings maps a parameter name to its value as text ("2s", "16",
// "jittered 50ms-250ms"). Text keeps the values exact and printable.
type Settings map[string]string

// Row is one figure: one metric of one contender in one variant of one
// scenario, aggregated across repetitions.
type Row struct {
	Scenario  string `json:"scenario"`
	Contender string `json:"contender"`
	Variant   string `json:"variant"`
	Metric    string `json:"metric"`
	Unit      string `json:"unit"`
	// Median, Min and Max are across repetitions.
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// N is the number of repetitions the row aggregates.
	N int `json:"n"`
	// Better is the direction in which the metric improves: BetterLower,
	// BetterHigher, or "" when it has none (a count of grants, a
	// parameter). Summarize copies it from the raw metrics.
	Better string `json:"better,omitempty"`
	// Network is the network profile of the figure (Raw.Network).
	Network string `json:"network,omitempty"`
}

// Directions of Row.Better.
const (
	BetterLower  = "lower"
	BetterHigher = "higher"
)

// Raw is the record of one repetition of one scenario variant for one
// contender.
type Raw struct {
	Scenario   string    `json:"scenario"`
	Contender  string    `json:"contender"`
	Variant    string    `json:"variant"`
	Repetition int       `json:"repetition"` // 1-based
	StartedAt  time.Time `json:"started_at"`
	// Seconds is the measured span (warm-up excluded).
	Seconds float64 `json:"seconds"`
	// Metrics are this repetition's figures; Summary aggregates them.
	Metrics []Metric `json:"metrics"`
	// Counts are plain event counts: cycles, failures, gave_up, lost,
	// time_wait_sockets (TIME_WAIT sockets to the contender's servers at
	// the end of the span).
	Counts map[string]int64 `json:"counts,omitempty"`
	// Histograms are encoded HdrHistogram snapshots of the repetition.
	Histograms []Histogram `json:"histograms,omitempty"`
	// CPU is the CPU time spent during the measured span, when measured.
	CPU *CPU `json:"cpu,omitempty"`
	// Clients is a per-client table (fairness: one row per contender
	// process or goroutine).
	Clients []Client `json:"clients,omitempty"`
	// Series are short lists of raw samples (handover trials, one value
	// per trial) kept verbatim.
	Series []Series `json:"series,omitempty"`
	// Errors holds up to a few distinct error messages seen.
	Errors []string `json:"errors,omitempty"`
	// Chaos is the chaos scenario's schedule, verdicts and timeline.
	Chaos *Chaos `json:"chaos,omitempty"`
	// Warnings are what the repetition found worth saying without
	// failing (an offered rate above the contender's measured closed-loop
	// maximum), in words.
	Warnings []string `json:"warnings,omitempty"`
	// Verdicts are the SLO thresholds of a workload checked on this
	// repetition, in the file's order.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Skipped, when set, says why the variant was not measured for this
	// contender: it does not apply (a single server has no minority to
	// lose), the backend cannot run it (external servers cannot be
	// killed) or a limit of the machine stopped it. The record then holds
	// no metrics, or only those measured up to the limit
	// (sessions_reached), so the summary leaves the variant out for the
	// contender, and the report shows the reason. It is the only way a run
	// records a variant it did not measure.
	Skipped string `json:"skipped,omitempty"`
	// Network is the network profile the repetition ran under (a
	// NetworkRun's Profile), "" for loopback; under another profile the
	// variant's name carries it too ("w1@az"), so that every figure of
	// one variant under one profile stays one row.
	Network string `json:"network,omitempty"`
	// Line is what the emulated network's delay line did during the
	// repetition's step (shared by the records of an interleaved step).
	Line *LineCost `json:"line,omitempty"`
}

// Metric is one named figure of one repetition.
type Metric struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	// Better is the metric's better direction, as in Row.Better.
	Better string `json:"better,omitempty"`
}

// Histogram is an HdrHistogram snapshot.
type Histogram struct {
	// Name is what was measured: "acquire", "cycle", "wait", "handover".
	Name string `json:"name"`
	// Unit of the recorded values, e.g. "ns".
	Unit  string `json:"unit"`
	Count int64  `json:"count"`
	// Encoded is the HdrHistogram V2 compressed, base64 encoding
	// (hdrhistogram.Histogram.Encode(hdrhistogram.V2CompressedEncodingCookieBase)).
	Encoded string `json:"encoded"`
}

// CPU is CPU time spent during a measured span.
type CPU struct {
	// ServerMS is user+system time of all server processes of the
	// contender; ServerSource says how it was read ("/proc/<pid>/stat",
	// "cgroup cpu.stat", or "unavailable" for external servers).
	ServerMS     float64 `json:"server_ms"`
	ServerSource string  `json:"server_source"`
	// ClientMS is user+system time of the bench process (getrusage).
	ClientMS float64 `json:"client_ms"`
}

// Client is one row of a per-client table.
type Client struct {
	ID      string           `json:"id"`
	Counts  map[string]int64 `json:"counts,omitempty"`
	Metrics []Metric         `json:"metrics,omitempty"`
}

// Verdict is one SLO threshold of a workload checked on one repetition.
type Verdict struct {
	// Threshold is the threshold as its file writes it
	// ("acquire_p99 < 100ms"); Metric the metric it reads.
	Threshold string `json:"threshold"`
	Metric    string `json:"metric"`
	// Value is the measured value in Unit: the metric's unit, or "ratio"
	// for a share (failures of the requests, achieved of offered). Only
	// meaningful when Known.
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Known is false when the value was not measured (Why says why);
	// Pass is then false too.
	Known bool   `json:"known"`
	Pass  bool   `json:"pass"`
	Why   string `json:"why,omitempty"`
}

// Series is a list of raw samples.
type Series struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit"`
	Values []float64 `json:"values"`
}

// Metric returns the repetition's metric named name.
func (x Raw) Metric(name string) (Metric, bool) {
	for _, m := range x.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Figure returns a named figure of the repetition: "seconds" (when
// positive), else its metric, else its count, else the sum of its
// clients' counts.
func (x Raw) Figure(name string) (float64, bool) {
	if name == "seconds" {
		return x.Seconds, x.Seconds > 0
	}
	if m, ok := x.Metric(name); ok {
		return m.Value, true
	}
	if v, ok := x.Counts[name]; ok {
		return float64(v), true
	}
	var sum int64
	found := false
	for _, c := range x.Clients {
		if v, ok := c.Counts[name]; ok {
			sum, found = sum+v, true
		}
	}
	return float64(sum), found
}
