package analysis

import (
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// A situation is a leaderboard when its scenario ran two locks or more
// and its ranking places two of them; floors are not ranked, and a lock
// beside noise alone says nothing.
func TestLeaderboards(t *testing.T) {
	p50 := results.LatencyMetrics.AcquireP50
	latency := func(c string, vals ...float64) []results.Raw {
		var out []results.Raw
		for i, v := range vals {
			out = append(out, results.Raw{Scenario: "latency", Contender: c, Variant: "w1", Repetition: i + 1, Metrics: []results.Metric{{Name: p50.Name, Unit: p50.Unit, Value: v}}})
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		raw   [][]results.Raw
		want  []string // contenders of the one leaderboard, best first; nil for none
		place []int
	}{
		{"two locks apart", [][]results.Raw{latency("slow", 200, 210, 220), latency("fast", 100, 101, 102)}, []string{"fast", "slow"}, []int{1, 2}},
		{"two locks tied", [][]results.Raw{latency("a", 100, 110, 120), latency("b", 105, 115, 125)}, []string{"a", "b"}, []int{1, 1}},
		{"a lock beside a floor", [][]results.Raw{latency("a", 100, 110, 120), latency("floor", 1, 1, 1)}, nil, nil},
		{"a lock beside noise", [][]results.Raw{latency("a", 100, 110, 120), latency("b", 1, 50, 900)}, nil, nil},
	} {
		var raw []results.Raw
		for _, r := range tt.raw {
			raw = append(raw, r...)
		}
		run := New(&results.Results{
			Contenders: []results.ContenderInfo{{Name: "floor", Floor: true}},
			Raw:        raw, Summary: results.Summarize(raw),
			Scenarios: []results.ScenarioInfo{{Name: "latency", Metrics: results.LatencyMetrics.List(), Variants: []results.VariantInfo{{Name: "w1"}}}},
		})
		boards := run.Leaderboards()
		if tt.want == nil {
			if len(boards) != 0 {
				t.Errorf("%s: %d leaderboards, want none", tt.name, len(boards))
			}
			continue
		}
		if len(boards) != 1 {
			t.Fatalf("%s: %d leaderboards, want 1", tt.name, len(boards))
		}
		es := boards[0].Entries
		if len(es) != len(tt.want) {
			t.Fatalf("%s: %d entries, want %d", tt.name, len(es), len(tt.want))
		}
		for i, e := range es {
			if e.Contender != tt.want[i] || e.Place != tt.place[i] {
				t.Errorf("%s: entry %d is %s at %d, want %s at %d", tt.name, i, e.Contender, e.Place, tt.want[i], tt.place[i])
			}
			if e.Condition.Scenario != "latency" || e.Condition.Variant != "w1" || e.Condition.Repetitions != 3 {
				t.Errorf("%s: %s's condition is %+v", tt.name, e.Contender, e.Condition)
			}
		}
	}
}
