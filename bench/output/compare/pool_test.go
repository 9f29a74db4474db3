package compare

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/monolock/monolock-bench/bench/results"
)

// oneFigure builds a synthetic run (a test fixture, not a measurement)
// with one figure per contender, one Raw per value, started at start.
func oneFigure(id string, start time.Time, values map[string][]float64) *results.Results {
	var raw []results.Raw
	for _, c := range slices.Sorted(func(yield func(string) bool) {
		for c := range values {
			if !yield(c) {
				return
			}
		}
	}) {
		for i, v := range values[c] {
			raw = append(raw, results.Raw{Scenario: "latency", Variant: "w1", Contender: c, Repetition: i + 1, StartedAt: start,
				Metrics: []results.Metric{{Name: "acquire_p50", Unit: "us", Value: v}}})
		}
	}
	rows := results.Summarize(raw)
	for i := range rows {
		rows[i].Better = results.BetterLower
	}
	return &results.Results{
		RunID: id, StartedAt: start, FinishedAt: start.Add(time.Minute), Raw: raw, Summary: rows,
		Parameters:  results.Parameters{Repetitions: len(values["monolock"])},
		Environment: results.Environment{CPUModel: "TEST FIXTURE (synthetic)", Cores: 2},
		Contenders:  []results.ContenderInfo{{Name: id + "-only"}, {Name: "monolock"}},
	}
}

// TestPool: the runs of one side become one run with every repetition,
// numbered in turn, and a summary over all of them.
func TestPool(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	a := oneFigure("a", t0, map[string][]float64{"monolock": {100, 104}})
	b := oneFigure("b", t0.Add(2*time.Minute), map[string][]float64{"monolock": {102}, "redis": {90}})
	p := Pool([]*results.Results{a, b})
	if p.RunID != "a+b" || p.Parameters.Repetitions != 3 || !p.StartedAt.Equal(t0) || !p.FinishedAt.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("pooled id %q, repetitions %d, span %v–%v", p.RunID, p.Parameters.Repetitions, p.StartedAt, p.FinishedAt)
	}
	var reps []int
	for _, r := range p.Raw {
		if r.Contender == "monolock" {
			reps = append(reps, r.Repetition)
		}
	}
	if !slices.Equal(reps, []int{1, 2, 3}) {
		t.Errorf("monolock's repetitions %v, want 1 2 3", reps)
	}
	for _, row := range p.Summary {
		if row.Contender == "monolock" && (row.N != 3 || row.Median != 102 || row.Better != results.BetterLower) {
			t.Errorf("monolock's row %+v, want n=3, median 102, better lower", row)
		}
	}
	var names []string
	for _, c := range p.Contenders {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"a-only", "monolock", "b-only"}) {
		t.Errorf("contenders %v, want the union in order of first appearance", names)
	}
	if a.Raw[1].Repetition != 2 || b.Raw[0].Repetition != 1 || len(a.Raw) != 2 {
		t.Error("Pool modified its arguments")
	}
	if Pool([]*results.Results{a}) != a {
		t.Error("a side of one run is that run")
	}
}

// TestCompareRunsInTurns: runs made in turns and pooled per side compare
// as one run per side with every repetition would, without the caveat
// on drift; runs made one side after the other carry it.
func TestCompareRunsInTurns(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	old := []float64{100, 101, 99, 102, 100, 101}
	new := []float64{120, 121, 119, 122, 120, 121}
	var inTurnsOld, inTurnsNew, afterOld, afterNew []*results.Results
	for i := range 6 {
		inTurnsOld = append(inTurnsOld, oneFigure("o", at(2*i), map[string][]float64{"monolock": old[i : i+1]}))
		inTurnsNew = append(inTurnsNew, oneFigure("n", at(2*i+1), map[string][]float64{"monolock": new[i : i+1]}))
		afterOld = append(afterOld, oneFigure("o", at(i), map[string][]float64{"monolock": old[i : i+1]}))
		afterNew = append(afterNew, oneFigure("n", at(6+i), map[string][]float64{"monolock": new[i : i+1]}))
	}
	whole := Compare([]*results.Results{oneFigure("o", t0, map[string][]float64{"monolock": old})},
		[]*results.Results{oneFigure("n", t0, map[string][]float64{"monolock": new})}, 0)
	turns := Compare(inTurnsOld, inTurnsNew, 0)
	if len(turns.Figures) != 1 || len(whole.Figures) != 1 {
		t.Fatalf("figures %d and %d, want 1", len(turns.Figures), len(whole.Figures))
	}
	got, want := turns.Figures[0], whole.Figures[0]
	if got.P != want.P || got.Delta != want.Delta || got.OldN != 6 || got.NewN != 6 || got.Direction != "worse" {
		t.Errorf("pooled: p %v delta %s n %d+%d %s; whole runs: p %v delta %s", got.P, got.Delta, got.OldN, got.NewN, got.Direction, want.P, want.Delta)
	}
	drift := func(c *Comparison) bool {
		return slices.ContainsFunc(c.Caveats, func(s string) bool { return strings.Contains(s, "drift") })
	}
	if drift(turns) {
		t.Errorf("runs in turns: caveats %q", turns.Caveats)
	}
	if !drift(Compare(afterOld, afterNew, 0)) {
		t.Error("runs one side after the other: no caveat on drift")
	}
	// Each containers run has a Docker network of its own, by name.
	for i, r := range slices.Concat(inTurnsOld, inTurnsNew) {
		r.Environment.NetworkPath = fmt.Sprintf("container IP on bridge network, no docker-proxy (network monolock-bench-%012x)", 0xaa7c754048e4+i)
	}
	if c := Compare(inTurnsOld, inTurnsNew, 0); len(c.Caveats) != 0 {
		t.Errorf("runs on the same kind of path: caveats %q", c.Caveats)
	}
	if len(turns.Discoveries) != 1 {
		t.Errorf("discoveries %v, want the one figure (p %v)", turns.Discoveries, got.P)
	}
}

func TestDiscoveries(t *testing.T) {
	figs := func(ps ...float64) []Figure {
		var out []Figure
		for _, p := range ps {
			out = append(out, Figure{PShift: p})
		}
		return out
	}
	tests := []struct {
		ps   []float64
		want []int
	}{
		// m=4, q=0.05: thresholds 0.0125, 0.025, 0.0375, 0.05.
		{[]float64{0.04, 0.001, 0.02, 0.9}, []int{1, 2}},       // ranks 1 and 2 pass, 3 (0.04 > 0.0375) does not
		{[]float64{0.03, 0.03, 0.036, 0.9}, []int{0, 1, 2}},    // step-up: rank 3 passes, so ranks 1 and 2 are in too
		{[]float64{0.02, 0.02, 0.02, 0.02}, []int{0, 1, 2, 3}}, // rank 4: 0.02 ≤ 0.05
		{[]float64{0.029, 0.029, 0.5, 0.5}, nil},               // 0.029 > 0.0125 and > 0.025
		{nil, nil},
	}
	for _, tt := range tests {
		if got := discoveries(figs(tt.ps...), 0.05); !slices.Equal(got, tt.want) {
			t.Errorf("discoveries(%v) = %v, want %v", tt.ps, got, tt.want)
		}
	}
}

// TestTallyText: the comparison says how many figures differ, how many
// would by chance, and when no single change can survive the correction.
func TestTallyText(t *testing.T) {
	var figs []Figure
	for i := range 100 {
		f := Figure{Scenario: "s", Variant: "v", Contender: fmt.Sprint("c", i), Label: "m", OldN: 6, NewN: 6, P: 0.5, PShift: 0.5, Delta: "~",
			Old: benchmath.Summary{Center: 100}, New: benchmath.Summary{Center: 101}}
		switch {
		case i < 3: // the rank test's floor, a Welch p-value beyond it
			f.P, f.PShift, f.Delta, f.Direction = 0.0022, 1e-6, "+10.00%", "worse"
			f.New.Center = 110
		case i < 5: // a tail the rank test passes over
			f.PShift = 1e-5
		}
		figs = append(figs, f)
	}
	c := &Comparison{Figures: figs, Discoveries: discoveries(figs, 0.05)}
	got := c.tallyText(0.05)
	for _, want := range []string{
		"3 of 100 figures differ at p < 0.05 (0 better, 3 worse)",
		"at most about 5 would by chance alone",
		"5 survive the Benjamini–Hochberg procedure",
		"s/v/c0 m +10.00%",
		"s/v/c3 m +1.00%", // its change of the medians, where the rank test says ~
	} {
		if !strings.Contains(got, want) {
			t.Errorf("tally %q lacks %q", got, want)
		}
	}
	c = &Comparison{Figures: figs[5:]}
	if got := c.tallyText(0.05); !strings.Contains(got, "None survives") {
		t.Errorf("tally without discoveries: %q", got)
	}
}
