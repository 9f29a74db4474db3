package analysis

import (
	"slices"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// A scenario's figure tables: a column per metric but the worker count,
// a yes/no figure's values per repetition, and a variant no contender
// ran comes last with only why.
func TestFigureTables(t *testing.T) {
	tm := results.ThroughputMetrics
	rec := func(c, v string, rep int, skipped string, ms ...results.Metric) results.Raw {
		return results.Raw{Scenario: "throughput", Contender: c, Variant: v, Repetition: rep, Skipped: skipped, Metrics: ms}
	}
	ok := results.Metric{Name: "ok", Unit: "bool", Value: 1}
	no := results.Metric{Name: "ok", Unit: "bool", Value: 0}
	run := handScenario("throughput", []results.MetricSpec{tm.Workers, tm.CyclesPerSec, {Name: "ok", Unit: "bool", Label: "all granted"}}, nil, []results.Raw{
		rec("a", "w8", 1, "", tm.Workers.Of(8), tm.CyclesPerSec.Of(100), ok),
		rec("a", "w8", 2, "", tm.Workers.Of(8), tm.CyclesPerSec.Of(120), no),
		rec("b", "w8", 1, "", tm.Workers.Of(8), tm.CyclesPerSec.Of(90), ok),
		rec("a", "w64", 1, "too many workers"),
		rec("b", "w64", 1, "too many workers"),
	})
	ts := run.FigureTables("throughput")
	if len(ts) != 2 || ts[0].Variant != "w8" || ts[1].Variant != "w64" {
		t.Fatalf("tables %+v: want w8, then w64", ts)
	}
	var labels []string
	for _, c := range ts[0].Columns {
		labels = append(labels, c.Label)
	}
	if want := []string{tm.CyclesPerSec.Label, "all granted"}; !slices.Equal(labels, want) {
		t.Errorf("w8's columns %q, want %q (no worker count)", labels, want)
	}
	yes := ts[0].Columns[1].Figures[0]
	if got := run.PerRepetition(yes.Row); yes.Contender != "a" || !slices.Equal(got, []float64{1, 0}) {
		t.Errorf("a's yes/no per repetition: %s %v, want a [1 0]", yes.Contender, got)
	}
	if len(ts[1].Columns) != 0 || !slices.Equal(ts[1].NotMeasured, []string{"a: too many workers", "b: too many workers"}) {
		t.Errorf("w64: %+v, want no column, each contender's reason once", ts[1])
	}
}
