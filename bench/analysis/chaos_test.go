package analysis

import (
	"reflect"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// The chaos rows count running double holders apart from frozen ones, say
// why a figure is missing (no tokens, a run before its checker) instead of
// a zero, count the locks not freed through a fault on their holder, and
// list the faults by kind (hand-made records).
func TestChaosRows(t *testing.T) {
	two := 2
	cm := results.ChaosMetrics
	raw := []results.Raw{
		{Scenario: "chaos", Contender: "a", Variant: "soak", Repetition: 1,
			Metrics: []results.Metric{m(cm.TokenOrderViolations.Name, "count", 3), m(cm.HolderWritesRefusedFenced.Name, "count", 15), m(cm.WritesAfterLost.Name, "count", 1)},
			Chaos: &results.Chaos{Tokens: true, Verdict: results.ChaosVerdict{
				Exclusion: results.ChaosCheck{Count: 7}, Running: &two,
				Blame:   &results.ChaosBlame{ServerEarly: 1, ClientLate: 1},
				Faults:  map[string]int{"server-kill": 4, "client-pause": 5, "odd-kind": 1},
				Skipped: map[string]int{"clock-step": 4},
				Stores:  []results.ChaosStore{{Store: "fenced", Fenced: true, StaleWrites: results.ChaosCheck{Count: 1}}, {Store: "unfenced", StaleWrites: results.ChaosCheck{Count: 9}}},
				HolderFaults: []results.ChaosHolderFault{
					{Kind: "client-pause", Kept: true, HandoverMS: -1}, {Kind: "client-pause", Kept: true, HandoverMS: 2800}, {Kind: "client-host-loss", HandoverMS: 1900},
				},
			}}},
		// b: no tokens, recorded before the checkers split the overlaps
		// and counted the token figures.
		{Scenario: "chaos", Contender: "b", Variant: "soak", Repetition: 1,
			Chaos: &results.Chaos{Verdict: results.ChaosVerdict{Exclusion: results.ChaosCheck{Count: 4}, Faults: map[string]int{"client-pause": 5}}}},
	}
	run := New(&results.Results{Parameters: results.Parameters{Contenders: []string{"a", "b"}}, Raw: raw, Summary: results.Summarize(raw)})
	rows := run.Chaos()
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	a, b := rows[0], rows[1]
	want := ChaosRow{Contender: "a", Running: Tally{N: 2}, Frozen: Tally{N: 5}, StaleFenced: Tally{N: 1},
		HolderFaults: 3, Kept: 2, Never: 1, RefusedHolder: Tally{N: 15}, TokenOrder: Tally{N: 3}, AfterLost: Tally{N: 1},
		ServerEarly: Tally{N: 1}, ClientLate: Tally{N: 1},
		Faults:  []KindCount{{"client-pause", 5}, {"server-kill", 4}, {"odd-kind", 1}},
		Skipped: []KindCount{{"clock-step", 4}}}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("a:\n got %+v\nwant %+v", a, want)
	}
	if a.Applied() != 10 {
		t.Errorf("a applied %d faults, want 10", a.Applied())
	}
	noTokens, old := Tally{Missing: "no fencing tokens"}, Tally{Missing: "not recorded"}
	if b.Running != old || b.Frozen != old || b.StaleFenced != noTokens || b.TokenOrder != noTokens || b.RefusedHolder != noTokens || b.AfterLost != old {
		t.Errorf("b: a missing figure must say why, got %+v", b)
	}
	if none := (Tally{Missing: "no server record"}); b.ServerEarly != none || b.Unclassified != none || b.NoServerRecord == "" {
		t.Errorf("b: without a server record the classes must say so, and why: %+v", b)
	}
}
