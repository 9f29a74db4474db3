package results

import "testing"

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
