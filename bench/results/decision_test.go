package results

import (
	"strings"
	"testing"
)

// An old file gets today's decision figures for the scenarios it declares
// without any, and today's claim kinds by rule id; what it has is kept.
func TestFillDefaultsDecidesAndKinds(t *testing.T) {
	today := Defaults{
		Scenarios: []ScenarioInfo{
			{Name: "handover", Decides: []DecisionFigure{{ID: "frozen-freed", Metric: "max", Op: AtMost}}},
			{Name: "safety", Decides: []DecisionFigure{{ID: "fenced-store", Metric: "unsafe_writes_fenced", Op: AtMost}}},
		},
		Claims: []ClaimRule{{ID: "a", Subject: "x", Kind: ClaimOther}, {ID: "b", Subject: "x", Kind: ClaimTarget}},
	}
	r := &Results{
		Parameters: Parameters{Contenders: []string{"x"}},
		Scenarios: []ScenarioInfo{
			{Name: "handover"},
			{Name: "safety", Decides: []DecisionFigure{{ID: "own", Metric: "m"}}},
		},
		Claims: []ClaimRule{{ID: "a", Subject: "x"}, {ID: "b", Subject: "x", Kind: ClaimPromise}, {ID: "c", Subject: "x"}},
	}
	r.FillDefaults(today)
	if got := r.Scenarios[0].Decides; len(got) != 1 || got[0].ID != "frozen-freed" {
		t.Errorf("handover decides = %+v, want today's", got)
	}
	if got := r.Scenarios[1].Decides; len(got) != 1 || got[0].ID != "own" {
		t.Errorf("safety decides = %+v, want the file's own kept", got)
	}
	for i, want := range []string{ClaimOther, ClaimPromise, ""} {
		if r.Claims[i].Kind != want {
			t.Errorf("claim %s kind %q, want %q", r.Claims[i].ID, r.Claims[i].Kind, want)
		}
	}
	if got := OfKind(ClaimTarget, []ClaimRule{{ID: "p", Kind: ClaimPromise}, {ID: "q"}}); got[0].Kind != ClaimPromise || got[1].Kind != ClaimTarget {
		t.Errorf("OfKind = %+v", got)
	}
}

// A file that declares some decision figures gets today's ranking
// figures under ids it lacks; a capability's threshold stays the file's.
func TestFillDefaultsAddsRankingFigures(t *testing.T) {
	today := Defaults{Scenarios: []ScenarioInfo{{Name: "latency", Decides: []DecisionFigure{
		{ID: "p50", Metric: "acquire_p50"}, {ID: "p99", Metric: "acquire_p99"}, {ID: "fast", Metric: "acquire_p50", Op: AtMost},
	}}}}
	r := &Results{Scenarios: []ScenarioInfo{{Name: "latency", Decides: []DecisionFigure{{ID: "p50", Metric: "acquire_p50", Text: "the file's"}}}}}
	r.FillDefaults(today)
	var ids []string
	for _, d := range r.Scenarios[0].Decides {
		ids = append(ids, d.ID)
	}
	if got := strings.Join(ids, ","); got != "p50,p99" || r.Scenarios[0].Decides[0].Text != "the file's" {
		t.Errorf("decides %+v: want the file's p50 and today's p99, no capability added", r.Scenarios[0].Decides)
	}
}
