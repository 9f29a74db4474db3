package analysis

import (
	"slices"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// figures of one lock in a hand-made run: its rate per repetition and
// its stale writes.
type lockFigures struct {
	rates []float64
	stale float64
}

// agreeRun is a hand-made run of locks a and b in one scenario that
// declares a capability ("fenced": no stale write) and the short-locks
// use case's ranking figure (short-locks-rate, higher is better).
func agreeRun(id string, locks map[string]lockFigures) *Run {
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
		for i, rate := range locks[c].rates {
			raw = append(raw, results.Raw{Scenario: "s", Contender: c, Variant: "v", Repetition: i + 1,
				Metrics: []results.Metric{m("stale", "count", locks[c].stale), m("rate", "1/s", rate)}})
		}
	}
	return New(&results.Results{RunID: id, Parameters: results.Parameters{Contenders: []string{"a", "b"}},
		Raw: raw, Summary: results.Summarize(raw), Scenarios: []results.ScenarioInfo{info}})
}

// pickOf returns the agreement's row of the short-locks use case.
func pickOf(t *testing.T, a Agreement) PickAgreement {
	t.Helper()
	for _, p := range a.Picks {
		if slices.Contains(p.Rank, "short-locks-rate") {
			return p
		}
	}
	t.Fatalf("no short-locks row in %+v", a.Picks)
	return PickAgreement{}
}

func TestAgreement(t *testing.T) {
	base := map[string]lockFigures{"a": {rates: []float64{1000, 1010, 990}}, "b": {rates: []float64{500, 505, 495}}}
	for _, tt := range []struct {
		name       string
		second     map[string]lockFigures
		flippedA   bool // a's "fenced" cell flips
		pickAgrees bool
	}{
		{"the same verdicts", map[string]lockFigures{"a": {rates: []float64{980, 1000, 1020}}, "b": {rates: []float64{510, 500, 490}}}, false, true},
		{"a capability flipped", map[string]lockFigures{"a": {rates: []float64{1000, 1010, 990}, stale: 1}, "b": {rates: []float64{500, 505, 495}}}, true, true},
		{"the pick flipped", map[string]lockFigures{"a": {rates: []float64{500, 505, 495}}, "b": {rates: []float64{1000, 1010, 990}}}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := Agree([]*Run{agreeRun("one", base), agreeRun("two", tt.second)})
			if !slices.Equal(a.Runs, []string{"one", "two"}) || len(a.Cells) != 2 {
				t.Fatalf("runs %v, cells %+v: want two runs, a and b on fenced", a.Runs, a.Cells)
			}
			for _, c := range a.Cells {
				want := tt.flippedA && c.Contender == "a"
				if c.Flipped() != want || c.Agrees() == want || !c.Compared() {
					t.Errorf("%s fenced: flipped %v, agrees %v (%v → %v), want flipped %v", c.Contender, c.Flipped(), c.Agrees(), c.Verdicts[0].Mark, c.Verdicts[1].Mark, want)
				}
			}
			if tt.flippedA {
				if c := a.Cells[0]; c.Verdicts[0].Mark != Holds || c.Verdicts[1].Mark != Fails || c.Verdicts[1].Short != "1" {
					t.Errorf("a's flip: %+v, want ✓ then ✗ 1", c.Verdicts)
				}
			}
			p := pickOf(t, a)
			if p.Agrees() != tt.pickAgrees {
				t.Errorf("pick agrees = %v (%v → %v), want %v", p.Agrees(), p.Picks[0].Supports, p.Picks[1].Supports, tt.pickAgrees)
			}
			cellsAgree, compared, picksAgree, picks := a.Tally()
			wantCells, wantPicks := 2, 1
			if tt.flippedA {
				wantCells = 1
			}
			if !tt.pickAgrees {
				wantPicks = 0
			}
			if cellsAgree != wantCells || compared != 2 || picksAgree != wantPicks || picks != 1 {
				t.Errorf("tally %d/%d cells, %d/%d picks; want %d/2, %d/1", cellsAgree, compared, picksAgree, picks, wantCells, wantPicks)
			}
		})
	}
}

// A cell one run did not measure is neither an agreement nor a flip.
func TestAgreementNotMeasuredInOneRun(t *testing.T) {
	a := Agree([]*Run{
		agreeRun("one", map[string]lockFigures{"a": {rates: []float64{1000}}, "b": {rates: []float64{500}}}),
		agreeRun("two", map[string]lockFigures{"a": {rates: []float64{1000}}}),
	})
	for _, c := range a.Cells {
		if c.Contender == "b" && (c.Compared() || c.Flipped() || c.Agrees()) {
			t.Errorf("b, measured in one run only: compared %v, flipped %v, agrees %v", c.Compared(), c.Flipped(), c.Agrees())
		}
	}
}
