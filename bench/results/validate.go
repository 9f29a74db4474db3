package results

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("results: invalid")

// Backends a run can use.
var backends = map[string]bool{"containers": true, "local": true, "external": true, "kubernetes": true}

// specMetrics are the metrics named in the spec's table (spec/bench.md,
// "Interfaces that stay stable"), by scenario: their units are fixed.
// Metrics not listed here may be added freely with any non-empty unit.
var specMetrics = map[string][]MetricSpec{
	"latency": {
		LatencyMetrics.AcquireP50, LatencyMetrics.AcquireP99, LatencyMetrics.AcquireP999,
		LatencyMetrics.CycleP50, LatencyMetrics.CycleP99,
	},
	"throughput": {
		ThroughputMetrics.CyclesPerSec, ThroughputMetrics.CycleP99,
		ThroughputMetrics.ServerCPUMsPer1k, ThroughputMetrics.ClientCPUMsPer1k,
	},
	"handover": {HandoverMetrics.P50, HandoverMetrics.P95, HandoverMetrics.Max, HandoverMetrics.Failed},
	"fairness": {
		FairnessMetrics.WaitP50, FairnessMetrics.WaitP99, FairnessMetrics.WaitMax,
		FairnessMetrics.Utilisation, FairnessMetrics.ServerOpsPerSec, FairnessMetrics.Grants,
	},
	"failover": {
		FailoverMetrics.UnavailableMs, FailoverMetrics.RecoveryMs, FailoverMetrics.FailedAttempts,
		FailoverMetrics.LostHolders, FailoverMetrics.DoubleGrants,
		FailoverMetrics.AcquireP99DuringFault, FailoverMetrics.TokensMonotonic,
	},
	"chaos": {
		ChaosMetrics.Faults, ChaosMetrics.Operations, ChaosMetrics.DoubleHolders,
		ChaosMetrics.StaleWritesFenced, ChaosMetrics.StaleWritesUnfenced, ChaosMetrics.LostUpdates,
		ChaosMetrics.LinearizableFenced, ChaosMetrics.LinearizableUnfenced, ChaosMetrics.ViolationRateHi,
	},
	"workload": {
		WorkloadMetrics.OfferedPerSec, WorkloadMetrics.AchievedPerSec,
		WorkloadMetrics.AcquireP50, WorkloadMetrics.AcquireP99, WorkloadMetrics.AcquireP999,
		WorkloadMetrics.WaitP99, WorkloadMetrics.Failures, WorkloadMetrics.ServerCPUMsPer1k, WorkloadMetrics.SLOPass,
	},
	"scale": {
		ScaleMetrics.SessionsReached, ScaleMetrics.ServerBytesPerSession, ScaleMetrics.ClientBytesPerLock,
		ScaleMetrics.ServerCPUMsPerSec, ScaleMetrics.ServerOpsPerSec, ScaleMetrics.HeartbeatsPerSec,
		ScaleMetrics.PromotionP50, ScaleMetrics.PromotionP99, ScaleMetrics.QueueFillMs,
		ScaleMetrics.GrantsPerSec, ScaleMetrics.WaitP99,
	},
}

// Validate checks r against the schema: version, identity, environment,
// parameters, every raw record (finite values, spec units, histograms that
// decode to their stated count, no duplicate repetition) and the summary,
// which must be exactly Summarize(r.Raw) so that every figure traces back to
// raw data. Errors wrap ErrInvalid.
func (r *Results) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
	}
	switch {
	case r.SchemaVersion < 1 || r.SchemaVersion > SchemaVersion:
		return bad("schema_version %d (this program reads 1..%d)", r.SchemaVersion, SchemaVersion)
	case r.RunID == "":
		return bad("empty run_id")
	case r.StartedAt.IsZero():
		return bad("zero started_at")
	case !r.FinishedAt.IsZero() && r.FinishedAt.Before(r.StartedAt):
		return bad("finished_at %v before started_at %v", r.FinishedAt, r.StartedAt)
	case !backends[r.Environment.Backend]:
		return bad("backend %q (want containers, local or external)", r.Environment.Backend)
	case r.Parameters.Repetitions < 1:
		return bad("repetitions %d < 1", r.Parameters.Repetitions)
	case r.Partial != (r.PartialReason != ""):
		return bad("partial=%v with partial_reason %q: both or neither", r.Partial, r.PartialReason)
	}
	type rep struct {
		scenario, contender, variant string
		repetition                   int
	}
	seen := map[rep]bool{}
	for i, raw := range r.Raw {
		where := fmt.Sprintf("raw[%d] %s/%s/%s#%d", i, raw.Scenario, raw.Contender, raw.Variant, raw.Repetition)
		switch {
		case raw.Scenario == "" || raw.Contender == "" || raw.Variant == "":
			return bad("%s: empty scenario, contender or variant", where)
		case raw.Repetition < 1:
			return bad("%s: repetition < 1", where)
		case !finite(raw.Seconds) || raw.Seconds < 0:
			return bad("%s: seconds %v", where, raw.Seconds)
		}
		k := rep{raw.Scenario, raw.Contender, raw.Variant, raw.Repetition}
		if seen[k] {
			return bad("%s: duplicate repetition", where)
		}
		seen[k] = true
		names := map[string]bool{}
		for _, m := range raw.Metrics {
			if err := checkMetric(raw.Scenario, m); err != nil {
				return bad("%s: %v", where, err)
			}
			if names[m.Name] {
				return bad("%s: metric %q twice", where, m.Name)
			}
			names[m.Name] = true
		}
		for _, h := range raw.Histograms {
			if err := checkHistogram(h); err != nil {
				return bad("%s: %v", where, err)
			}
		}
		if c := raw.CPU; c != nil && (!finite(c.ServerMS) || !finite(c.ClientMS) || c.ServerSource == "") {
			return bad("%s: cpu %+v", where, *c)
		}
		for _, c := range raw.Clients {
			if c.ID == "" {
				return bad("%s: client without id", where)
			}
			for _, m := range c.Metrics {
				if m.Name == "" || m.Unit == "" || !finite(m.Value) {
					return bad("%s: client %s: metric %+v", where, c.ID, m)
				}
			}
		}
		for _, s := range raw.Series {
			if s.Name == "" || s.Unit == "" {
				return bad("%s: series without name or unit", where)
			}
			for _, v := range s.Values {
				if !finite(v) {
					return bad("%s: series %s: value %v", where, s.Name, v)
				}
			}
		}
	}
	if err := checkSummary(r.Summary, r.Raw); err != nil {
		return bad("%v", err)
	}
	if err := checkContenders(r.Contenders); err != nil {
		return bad("%v", err)
	}
	if err := checkScenarios(r.Scenarios); err != nil {
		return bad("%v", err)
	}
	for i, c := range r.Claims {
		if err := checkClaimRule(c); err != nil {
			return bad("claim_rules[%d] %s: %v", i, c.ID, err)
		}
		for _, d := range r.Claims[:i] {
			if d.ID == c.ID {
				return bad("claim_rules[%d]: id %q twice", i, c.ID)
			}
		}
	}
	return nil
}

// checkSummary requires the summary to be Summarize(raw) apart from the
// better directions, which must be valid and the same for every row of a
// scenario's metric.
func checkSummary(summary []Row, raw []Raw) error {
	want := Summarize(raw)
	if len(summary) == 0 && len(want) == 0 {
		return nil
	}
	for i := range want {
		want[i].Better = "" // checked below, row against row
	}
	type metric struct{ scenario, name string }
	better := map[metric]string{}
	plain := make([]Row, len(summary))
	for i, x := range summary {
		if x.Better != "" && x.Better != BetterLower && x.Better != BetterHigher {
			return fmt.Errorf("summary %s/%s/%s %s: better %q (want lower, higher or empty)", x.Scenario, x.Variant, x.Contender, x.Metric, x.Better)
		}
		k := metric{x.Scenario, x.Metric}
		if b, ok := better[k]; ok && b != x.Better {
			return fmt.Errorf("summary %s %s: better %q and %q in different rows", x.Scenario, x.Metric, b, x.Better)
		}
		better[k] = x.Better
		plain[i] = x
		plain[i].Better = ""
	}
	if !reflect.DeepEqual(plain, want) {
		return fmt.Errorf("summary does not match the raw records (want Summarize(raw): %d rows, have %d)", len(want), len(summary))
	}
	return nil
}

// checkContenders requires named, distinct contenders with "#rrggbb"
// colours.
func checkContenders(info []ContenderInfo) error {
	seen := map[string]bool{}
	for i, c := range info {
		switch {
		case c.Name == "":
			return fmt.Errorf("contender_info[%d]: empty name", i)
		case seen[c.Name]:
			return fmt.Errorf("contender_info[%d]: %q twice", i, c.Name)
		case c.Colour != "" && !isColour(c.Colour):
			return fmt.Errorf("contender_info[%d] %s: colour %q (want #rrggbb)", i, c.Name, c.Colour)
		}
		seen[c.Name] = true
	}
	return nil
}

func isColour(s string) bool {
	if len(s) != 7 || s[0] != '#' {
		return false
	}
	for _, r := range s[1:] {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// checkClaimRule requires every field a rule needs to be evaluated.
func checkClaimRule(c ClaimRule) error {
	switch {
	case c.ID == "" || c.Claim == "" || c.Statement == "" || c.Threshold == "":
		return errors.New("empty id, claim, statement or threshold")
	case c.Scenario == "" || c.Variant == "" || c.Subject == "" || c.Metric == "":
		return errors.New("empty scenario, variant, subject or metric")
	case c.Op != AtMost && c.Op != AtLeast && c.Op != Within:
		return fmt.Errorf("op %q (want %s, %s or %s)", c.Op, AtMost, AtLeast, Within)
	case c.Spread != SpreadRange && c.Spread != SpreadMedian:
		return fmt.Errorf("spread %q (want %s or %s)", c.Spread, SpreadRange, SpreadMedian)
	case c.Pick != "" && c.Pick != PickFirst && c.Pick != PickLargest:
		return fmt.Errorf("pick %q (want %s, %s or empty)", c.Pick, PickFirst, PickLargest)
	case c.Than.Contender != "" && c.Than.Parameter != "":
		return errors.New("than: both a contender and a parameter")
	case c.Than.Variant != "" && c.Than.Parameter != "":
		return errors.New("than: both a variant and a parameter")
	case !finite(c.Than.Value) || !finite(c.Than.Factor) || c.Than.Factor < 0:
		return fmt.Errorf("than: value %v, factor %v", c.Than.Value, c.Than.Factor)
	case c.Op == Within && c.Than.Factor <= 1:
		return fmt.Errorf("within needs a factor above 1, have %v", c.Than.Factor)
	case c.Derive != nil && (len(c.Derive.Times) == 0 || c.Derive.Per == ""):
		return errors.New("derive without times or per")
	}
	for _, g := range c.Guards {
		if g.Metric == "" {
			return errors.New("guard without metric")
		}
	}
	return nil
}

func checkMetric(scenario string, m Metric) error {
	switch {
	case m.Name == "":
		return errors.New("metric without name")
	case m.Unit == "":
		return fmt.Errorf("metric %q without unit", m.Name)
	case !finite(m.Value):
		return fmt.Errorf("metric %q value %v", m.Name, m.Value)
	}
	for _, spec := range specMetrics[scenario] {
		if spec.Name == m.Name && spec.Unit != m.Unit {
			return fmt.Errorf("metric %q unit %q, the spec says %q", m.Name, m.Unit, spec.Unit)
		}
	}
	return nil
}

func checkHistogram(h Histogram) error {
	if h.Name == "" || h.Unit == "" {
		return errors.New("histogram without name or unit")
	}
	d, err := h.Decode()
	if err != nil {
		return err
	}
	if d.TotalCount() != h.Count {
		return fmt.Errorf("histogram %q: count %d, encoding holds %d", h.Name, h.Count, d.TotalCount())
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
