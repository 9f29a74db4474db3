package compare

import (
	"bytes"
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// agreeResults is a hand-made run (a test fixture, not a measurement) of
// locks a and b: their stale writes and rates, three repetitions each,
// in a scenario declaring the capability "fenced" and the short-locks
// use case's ranking figure.
func agreeResults(id string, stale, rate map[string]float64) *results.Results {
	info := results.ScenarioInfo{
		Name:     "s",
		Metrics:  []results.MetricSpec{{Name: "stale", Unit: "count"}, {Name: "rate", Unit: "1/s", Better: results.BetterHigher}},
		Variants: []results.VariantInfo{{Name: "v"}},
		Decides: []results.DecisionFigure{
			{ID: "fenced", Text: "no stale write", Variant: "v", Metric: "stale", Op: results.AtMost},
			{ID: "short-locks-rate", Text: "locks per second", Variant: "v", Metric: "rate"},
		},
	}
	var raw []results.Raw
	for _, c := range []string{"a", "b"} {
		for rep, f := range []float64{0.99, 1, 1.01} {
			raw = append(raw, results.Raw{Scenario: "s", Contender: c, Variant: "v", Repetition: rep + 1,
				Metrics: []results.Metric{{Name: "stale", Unit: "count", Value: stale[c]}, {Name: "rate", Unit: "1/s", Value: f * rate[c]}}})
		}
	}
	return &results.Results{SchemaVersion: results.SchemaVersion, RunID: id,
		Parameters: results.Parameters{Repetitions: 3, Contenders: []string{"a", "b"}},
		Raw:        raw, Summary: results.Summarize(raw), Scenarios: []results.ScenarioInfo{info}}
}

// compare lists the verdicts that flipped between two runs with the
// figures of both: a's capability and the short-locks pick.
func TestCompareListsFlippedVerdicts(t *testing.T) {
	old := agreeResults("one", map[string]float64{"a": 0, "b": 0}, map[string]float64{"a": 1000, "b": 500})
	new := agreeResults("two", map[string]float64{"a": 2, "b": 0}, map[string]float64{"a": 500, "b": 1000})
	var b bytes.Buffer
	if err := Compare([]*results.Results{old}, []*results.Results{new}, 0).Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"the decision's pick agrees on 0 of 1 use cases, the capability matrix on 1 of the 2 cells every run measured",
		"| Very many short locks (hold 0, many workers on distinct keys) | a (locks per second: a 1,000/s (n=3, place 1); b 500/s (n=3, place 2)) | b (locks per second: a 500/s (n=3, place 2); b 1,000/s (n=3, place 1)) | no |",
		"| a | no stale write | ✓ 0 (n=3) | ✗ 2 (n=3) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("compare lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| b | no stale write |") {
		t.Errorf("b's capability agrees, yet it is listed as a flip:\n%s", md)
	}
}
