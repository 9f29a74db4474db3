package analysis

import (
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// A lock beats its floor only when its worst repetition is better than
// the floor's best, in the metric's direction; overlapping figures do
// not, and a floor does not beat a lock.
func TestBeatsFloor(t *testing.T) {
	info := results.ScenarioInfo{Name: "s", Variants: []results.VariantInfo{{Name: "v"}},
		Metrics: []results.MetricSpec{{Name: "rate", Unit: "1/s", Better: results.BetterHigher}, {Name: "p50", Unit: "us", Better: results.BetterLower}}}
	for _, tt := range []struct {
		name              string
		metric            string
		lock, floor       []float64
		want, wantBelow   bool
		lockName, against string
	}{
		{"a rate above the floor's in every repetition", "rate", []float64{8900, 9000}, []float64{5900, 6000}, true, false, "lock", "floor"},
		{"a rate whose range meets the floor's", "rate", []float64{5950, 9000}, []float64{5900, 6000}, false, false, "lock", "floor"},
		{"a rate under the floor's", "rate", []float64{5000, 5100}, []float64{5900, 6000}, false, false, "lock", "floor"},
		{"a latency below the floor's", "p50", []float64{100, 101}, []float64{105, 110}, true, true, "lock", "floor"},
		{"the floor against a lock", "rate", []float64{8900, 9000}, []float64{5900, 6000}, false, false, "floor", "lock"},
	} {
		var raw []results.Raw
		for i := range tt.lock {
			raw = append(raw,
				results.Raw{Scenario: "s", Contender: "lock", Variant: "v", Repetition: i + 1, Metrics: []results.Metric{m(tt.metric, "x", tt.lock[i])}},
				results.Raw{Scenario: "s", Contender: "floor", Variant: "v", Repetition: i + 1, Metrics: []results.Metric{m(tt.metric, "x", tt.floor[i])}})
		}
		run := New(&results.Results{Parameters: results.Parameters{Contenders: []string{"lock", "floor"}},
			Contenders: []results.ContenderInfo{{Name: "lock"}, {Name: "floor", Floor: true}},
			Raw:        raw, Summary: results.Summarize(raw), Scenarios: []results.ScenarioInfo{info}})
		b, ok := run.BeatsFloor("s", "v", tt.metric, tt.lockName, tt.against)
		if ok != tt.want || b.Below != tt.wantBelow {
			t.Errorf("%s: beats %v (below %v), want %v (below %v)", tt.name, ok, b.Below, tt.want, tt.wantBelow)
		}
	}
}
