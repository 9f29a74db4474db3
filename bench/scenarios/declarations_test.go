package scenarios

import (
	"testing"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/results"
)

// every returns every scenario of this package with default parameters.
func every() []bench.Scenario {
	return []bench.Scenario{
		Latency(), Throughput(), HandoverConfig{Holder: holder.Command{}}.Scenario(), FairnessConfig{}.Scenario(),
		SafetyConfig{Holder: holder.Command{}}.Scenario(), FailoverConfig{}.Scenario(), Scale(),
		ChaosConfig{Holder: holder.Command{}}.Scenario(), Workloads(),
	}
}

// Every metric of the full reference run (the newest in reports/) is
// declared by its scenario with the unit it carries, every scenario of
// the run is among every()'s, and every declaration is valid: the report
// of a run reads the declarations, so a metric a scenario forgets to
// declare loses its label, kind and direction. (The smoke tests check the
// records they make through runScenario as well.)
func TestScenariosDeclareTheirMetrics(t *testing.T) {
	r, err := results.Load("../../reports/20261207T221911Z/results.json")
	if err != nil {
		t.Fatal(err)
	}
	var info []results.ScenarioInfo
	for _, s := range every() {
		i := s.Info(false)
		if i.Title == "" || len(i.Metrics) == 0 || len(i.Variants) == 0 {
			t.Errorf("%s: title %q, %d metrics, %d variants", s.Name, i.Title, len(i.Metrics), len(i.Variants))
		}
		info = append(info, i)
	}
	check := results.Results{SchemaVersion: 1, RunID: "x", StartedAt: r.StartedAt, Environment: r.Environment, Parameters: r.Parameters, Scenarios: info}
	if err := check.Validate(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, raw := range r.Raw {
		if err := results.Declared(info, raw); err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			t.Error(err)
		}
	}
}

// Every variant states its parameters: a report reads them, never the
// variant's name.
func TestVariantsHaveParams(t *testing.T) {
	for _, s := range every() {
		for _, v := range s.Info(false).Variants {
			if v.VariantParams == (results.VariantParams{}) {
				t.Errorf("%s %s: no parameters", s.Name, v.Name)
			}
		}
	}
	ps := map[string]results.VariantParams{}
	for _, v := range Throughput().Info(false).Variants {
		ps[v.Name] = v.VariantParams
	}
	if p := ps["distinct-w64"]; p.Workers != 64 || p.Contended {
		t.Errorf("distinct-w64: %+v", p)
	}
	if p := ps["shared-w16"]; p.Workers != 16 || !p.Contended || p.Keys != 4 {
		t.Errorf("shared-w16: %+v", p)
	}
	for _, v := range Scale().Info(false).Variants {
		if v.Name == "idle-10k-lease2s" && (v.Sessions != 10000 || v.Lease != "2s" || v.Load != results.LoadIdle) {
			t.Errorf("%s: %+v", v.Name, v.VariantParams)
		}
	}
}

// Every decision figure names a metric its scenario declares (its
// guards and bound metric too), a variant the scenario runs or a Where
// some variant matches, and a valid operator: the report's decision
// section reads them, and a misspelt name would leave a capability "not
// measured" for every lock.
func TestDecisionFiguresAreDeclared(t *testing.T) {
	for _, s := range every() {
		info := s.Info(false)
		if len(info.Decides) == 0 && s.Name != "chaos" {
			continue
		}
		for _, d := range info.Decides {
			names := []string{d.Metric, d.Than.Metric, d.Of}
			for _, g := range append(append([]results.ClaimGuard{}, d.Fail...), d.Void...) {
				names = append(names, g.Metric)
			}
			if d.Without != nil {
				names = append(names, d.Without.Metric)
			}
			for _, n := range names {
				if _, ok := info.Metric(n); n != "" && !ok {
					t.Errorf("%s %s: metric %q not declared", s.Name, d.ID, n)
				}
			}
			switch d.Op {
			case "", results.AtMost, results.AtLeast:
			default:
				t.Errorf("%s %s: op %q", s.Name, d.ID, d.Op)
			}
			if d.ID == "" || d.Text == "" || (d.Variant == "") == (d.Where == nil) {
				t.Errorf("%s %+v: want an id, a text and exactly one of Variant and Where", s.Name, d)
			}
			if _, ok := info.Variant(d.Variant); d.Variant != "" && !ok {
				t.Errorf("%s %s: variant %q not run", s.Name, d.ID, d.Variant)
			}
		}
	}
}
