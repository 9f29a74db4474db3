package results

import (
	"slices"
	"testing"
)

// TestMetricDeclarations: every scenario's metrics are valid specs with
// distinct names, listed in the order of their struct, and the spec's
// fixed units are among them.
func TestMetricDeclarations(t *testing.T) {
	all := map[string][]MetricSpec{
		"latency": LatencyMetrics.List(), "throughput": ThroughputMetrics.List(),
		"handover": HandoverMetrics.List(), "fairness": FairnessMetrics.List(),
		"safety": SafetyMetrics.List(), "failover": FailoverMetrics.List(),
		"scale": ScaleMetrics.List(), "chaos": ChaosMetrics.List(),
		"workload": WorkloadMetrics.List(),
	}
	for scenario, specs := range all {
		seen := map[string]bool{}
		for _, m := range specs {
			if err := m.check(); err != nil {
				t.Errorf("%s: %v", scenario, err)
			}
			if seen[m.Name] {
				t.Errorf("%s: %s twice", scenario, m.Name)
			}
			seen[m.Name] = true
		}
		for _, m := range specMetrics[scenario] {
			if !seen[m.Name] {
				t.Errorf("%s: the spec's %s is not declared", scenario, m.Name)
			}
		}
	}
	if got := HandoverMetrics.List(); len(got) != 4 || got[0] != HandoverMetrics.P50 || got[3] != HandoverMetrics.Failed {
		t.Errorf("HandoverMetrics.List() = %v, want p50, p95, max, failed", got)
	}
	if got := ChaosMetrics.FaultsUnder("client-pause"); got.Name != "faults_client_pause" || got.Label != "faults applied: client-pause" {
		t.Errorf("FaultsUnder(client-pause) = %+v", got)
	}
	if got := ChaosMetrics.ViolationRateUnder("clock-step").Name; got != "violation_rate_hi_clock_step" {
		t.Errorf("ViolationRateUnder(clock-step) = %s", got)
	}
	if got := FairnessMetrics.WaitP99.Of(1.5); got != (Metric{Name: "wait_p99", Unit: "ms", Value: 1.5}) {
		t.Errorf("WaitP99.Of(1.5) = %+v", got)
	}
}

// TestSpecUnits: the declared units of the metrics the spec's table
// names (shared/spec/bench.md, "Interfaces that stay stable") are the
// spec's, copied here by hand from the table, so that a change of a
// declaration cannot move validation's fixed units with it.
func TestSpecUnits(t *testing.T) {
	spec := map[string]map[string]string{
		"latency": {"acquire_p50": "us", "acquire_p99": "us", "acquire_p999": "us", "cycle_p50": "us", "cycle_p99": "us",
			"offered_per_sec": "1/s", "achieved_per_sec": "1/s"},
		"throughput": {"cycles_per_sec": "1/s", "cycle_p99": "us", "server_cpu_ms_per_1k": "ms", "client_cpu_ms_per_1k": "ms"},
		"handover":   {"p50": "ms", "p95": "ms", "max": "ms", "failed": "count"},
		"fairness": {"jain_index": "ratio", "fifo_inversions_per_1k": "count", "wait_p50": "ms", "wait_p99": "ms", "wait_max": "ms",
			"utilisation": "ratio", "server_ops_per_sec": "1/s", "grants": "count"},
		"safety": {"trials": "count", "double_grants": "count", "unsafe_writes_unfenced": "count", "unsafe_writes_fenced": "count",
			"fenced_rejections": "count", "learn_first_margin_p50": "ms", "learn_first_margin_min": "ms"},
		"failover": {"unavailable_ms": "ms", "recovery_ms": "ms", "failed_attempts": "count", "lost_holders": "count",
			"double_grants": "count", "acquire_p99_during_fault": "us", "tokens_monotonic": "bool", "detection_ms": "ms"},
		"chaos": {"faults": "count", "operations": "count", "double_holders": "count", "stale_writes_fenced": "count",
			"stale_writes_unfenced": "count", "lost_updates": "count", "linearizable_fenced": "bool",
			"linearizable_unfenced": "bool", "violation_rate_hi": "ratio"},
		"workload": {"offered_per_sec": "1/s", "achieved_per_sec": "1/s", "acquire_p50": "us", "acquire_p99": "us",
			"acquire_p999": "us", "wait_p99": "ms", "failures": "count", "server_cpu_ms_per_1k": "ms", "slo_pass": "bool"},
		"scale": {"sessions_reached": "count", "server_bytes_per_session": "bytes", "client_bytes_per_lock": "bytes",
			"server_cpu_ms_per_sec": "ms/s", "server_ops_per_sec": "1/s", "heartbeats_per_sec": "1/s",
			"promotion_p50": "us", "promotion_p99": "us", "queue_fill_ms": "ms", "grants_per_sec": "1/s", "wait_p99": "ms"},
	}
	declared := map[string][]MetricSpec{
		"latency": LatencyMetrics.List(), "throughput": ThroughputMetrics.List(),
		"handover": HandoverMetrics.List(), "fairness": FairnessMetrics.List(),
		"safety": SafetyMetrics.List(), "failover": FailoverMetrics.List(),
		"scale": ScaleMetrics.List(), "chaos": ChaosMetrics.List(),
		"workload": WorkloadMetrics.List(),
	}
	for scenario, units := range spec {
		for name, unit := range units {
			i := slices.IndexFunc(declared[scenario], func(m MetricSpec) bool { return m.Name == name })
			if i < 0 {
				t.Errorf("%s: the spec's %s is not declared", scenario, name)
			} else if got := declared[scenario][i].Unit; got != unit {
				t.Errorf("%s: %s declared in %q, the spec says %q", scenario, name, got, unit)
			}
		}
		for _, m := range specMetrics[scenario] {
			if units[m.Name] != m.Unit {
				t.Errorf("%s: validation fixes %s at %q, the spec says %q", scenario, m.Name, m.Unit, units[m.Name])
			}
		}
	}
}
