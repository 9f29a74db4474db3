package compare

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/scenarios"
	"github.com/monolock/monolock-bench/redisbench"
)

var update = flag.Bool("update", false, "rewrite the synthetic fixtures testdata/old.json, testdata/new.json and the golden testdata/compare.md")

// run builds a synthetic results file (a test fixture, not a measurement):
// one latency figure per contender with the given per-repetition values.
func run(t *testing.T, id string, values map[string][]float64, lease string) *results.Results {
	t.Helper()
	start := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	var raw []results.Raw
	for _, c := range []string{"monolock", "redis", "redlock"} {
		for i, v := range values[c] {
			raw = append(raw, results.Raw{
				Scenario: "latency", Contender: c, Variant: "w1", Repetition: i + 1, StartedAt: start,
				Metrics: []results.Metric{{Name: "acquire_p50", Unit: "us", Value: v}},
			})
		}
	}
	if tput, ok := values["throughput"]; ok {
		for i, v := range tput {
			raw = append(raw, results.Raw{
				Scenario: "throughput", Contender: "monolock", Variant: "distinct-w16", Repetition: i + 1, StartedAt: start,
				Metrics: []results.Metric{{Name: "cycles_per_sec", Unit: "1/s", Value: v}},
			})
		}
	}
	return &results.Results{
		SchemaVersion: results.SchemaVersion, RunID: id, StartedAt: start,
		Environment: results.Environment{CPUModel: "TEST FIXTURE (synthetic)", Cores: 2, Backend: "local", NetworkPath: "loopback"},
		Parameters: results.Parameters{
			Repetitions: 6, Scenarios: []string{"latency", "throughput"}, Contenders: []string{"monolock", "redis", "redlock"},
			Contender: map[string]results.Settings{"monolock": {"lease": lease}},
		},
		Summary: withBetter(results.Summarize(raw)), Raw: raw,
		Notes:  []string{"TEST FIXTURE: synthetic numbers, not a measurement."},
		Claims: append(monolock.Claims(), redisbench.Claims()...),
	}
}

// fixtures returns the two committed fixture runs; with -update it writes
// them first.
func fixtures(t *testing.T) (*results.Results, *results.Results) {
	t.Helper()
	if *update {
		old := run(t, "fixture-old", map[string][]float64{
			"monolock":   {100, 102, 99, 101, 103, 100},
			"redis":      {90, 91, 89, 92, 90, 91},
			"redlock":    {300, 310},
			"throughput": {20000, 20100, 19900, 20050, 19950, 20000},
		}, "2s")
		new := run(t, "fixture-new", map[string][]float64{
			"monolock": {160, 161, 159, 162, 158, 160}, // slower: significant, and no longer within 1.5× of Redis
			"redis":    {91, 90, 90, 89, 92, 91},       // unchanged
			"redlock":  {200, 205},                     // too few repetitions
		}, "3s")
		for path, r := range map[string]*results.Results{"testdata/old.json": old, "testdata/new.json": new} {
			if err := r.Save(path); err != nil {
				t.Fatal(err)
			}
		}
	}
	old, err := results.Load("testdata/old.json")
	if err != nil {
		t.Fatal(err)
	}
	new, err := results.Load("testdata/new.json")
	if err != nil {
		t.Fatal(err)
	}
	return old, new
}

func TestCompareFixtures(t *testing.T) {
	old, new := fixtures(t)
	// As monolock-bench compare does: the fixtures, like files written
	// before scenarios declared their figures, take today's declarations.
	for _, r := range []*results.Results{old, new} {
		r.FillDefaults(results.Defaults{Scenarios: []results.ScenarioInfo{scenarios.Latency().Info(false), scenarios.Throughput().Info(false)}})
	}
	c := Compare([]*results.Results{old}, []*results.Results{new}, 0)
	byContender := map[string]Figure{}
	for _, f := range c.Figures {
		byContender[f.Contender] = f
	}
	tests := []struct {
		contender, delta, direction string
		warned                      bool
	}{
		{"monolock", "+59.20%", "worse", false},
		{"redis", "~", "", false},
		{"redlock", "~", "", true},
	}
	for _, tt := range tests {
		f, ok := byContender[tt.contender]
		if !ok {
			t.Fatalf("%s: no figure", tt.contender)
		}
		if f.Delta != tt.delta || f.Direction != tt.direction || (len(f.Warnings) > 0) != tt.warned {
			t.Errorf("%s: delta %q direction %q warnings %q; want %q %q warned=%v", tt.contender, f.Delta, f.Direction, f.Warnings, tt.delta, tt.direction, tt.warned)
		}
	}
	if len(c.OnlyOld) != 1 || c.OnlyOld[0] != "throughput/distinct-w16/monolock locks per second" || len(c.OnlyNew) != 0 {
		t.Errorf("only old %q, only new %q", c.OnlyOld, c.OnlyNew)
	}
	if len(c.Caveats) != 1 || !strings.Contains(c.Caveats[0], "lease") {
		t.Errorf("caveats %q, want the lease difference", c.Caveats)
	}

	verdicts := map[string][2]analysis.ClaimVerdict{}
	for _, cl := range c.Claims {
		verdicts[cl.ID] = [2]analysis.ClaimVerdict{cl.Old, cl.New}
	}
	// old: monolock 100.5 vs redis 90.5 us (1.11×, within the 1.5× band);
	// new: 160 vs 90.5 (1.77×, outside in every pairing).
	if got := verdicts["acquire-latency"]; got != [2]analysis.ClaimVerdict{analysis.ClaimHolds, analysis.ClaimFails} {
		t.Errorf("acquire-latency verdicts %v, want holds then fails", got)
	}
	if got := verdicts["strict-fifo"]; got != [2]analysis.ClaimVerdict{analysis.ClaimInconclusive, analysis.ClaimInconclusive} {
		t.Errorf("strict-fifo verdicts %v, want inconclusive without fairness data", got)
	}

	// Claims pair by id: one only the new run checks shows – for the old.
	onlyNew := claimChanges(nil, []analysis.Claim{{ID: "x", Verdict: analysis.ClaimHolds}})
	if len(onlyNew) != 1 || onlyNew[0].Old != "" || onlyNew[0].New != analysis.ClaimHolds {
		t.Errorf("claimChanges(nil, x) = %+v", onlyNew)
	}

	var b bytes.Buffer
	if err := c.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/compare.md", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/compare.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("Markdown differs from testdata/compare.md (go test ./bench/output/compare -update):\n%s", b.String())
	}
}

// withBetter marks the fixture's figures as a runner would.
func withBetter(rows []results.Row) []results.Row {
	for i, x := range rows {
		rows[i].Better = results.BetterLower
		if x.Metric == "cycles_per_sec" {
			rows[i].Better = results.BetterHigher
		}
	}
	return rows
}

func TestDirection(t *testing.T) {
	lo := []float64{10, 11, 10, 12, 11}
	hi := []float64{20, 21, 20, 22, 21}
	tests := []struct {
		name          string
		unit, better  string
		old, new      []float64
		wantDirection string
		declared      *results.MetricSpec
	}{
		{"lower is better: down", "us", "lower", hi, lo, "better", nil},
		{"lower is better: up", "us", "lower", lo, hi, "worse", nil},
		{"higher is better: up", "1/s", "higher", lo, hi, "better", nil},
		{"higher is better: down", "1/s", "higher", hi, lo, "worse", nil},
		{"no direction", "count", "", lo, hi, "", nil},
		{"same is no change", "us", "lower", lo, lo, "", nil},
		{"declared better lower", "ms", "", lo, hi, "worse", &results.MetricSpec{Name: "m", Unit: "ms", Better: "lower"}},
		{"declared without a direction", "1/s", "higher", lo, hi, "", &results.MetricSpec{Name: "m", Unit: "1/s"}},
		{"neither declared nor in the rows", "ms", "", lo, hi, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mk := func(id string, vals []float64) *results.Results {
				var raw []results.Raw
				for i, v := range vals {
					raw = append(raw, results.Raw{Scenario: "s", Contender: "c", Variant: "v", Repetition: i + 1,
						Metrics: []results.Metric{{Name: "m", Unit: tt.unit, Value: v}}})
				}
				rows := results.Summarize(raw)
				for i := range rows {
					rows[i].Better = tt.better
				}
				r := &results.Results{RunID: id, Raw: raw, Summary: rows}
				if tt.declared != nil {
					r.Scenarios = []results.ScenarioInfo{{Name: "s", Metrics: []results.MetricSpec{*tt.declared}}}
				}
				return r
			}
			c := Compare([]*results.Results{mk("a", tt.old)}, []*results.Results{mk("b", tt.new)}, 0)
			if len(c.Figures) != 1 || c.Figures[0].Direction != tt.wantDirection {
				t.Fatalf("figures %+v, want direction %q", c.Figures, tt.wantDirection)
			}
		})
	}
}

// TestMarkdownCells: a figure's cells are escaped (a | in a name does not
// split the row, markup stays text) and read in the declared label and
// the unit that suits their magnitude, not the stored name and unit.
func TestMarkdownCells(t *testing.T) {
	c := &Comparison{OldRun: "a", NewRun: "b", Figures: []Figure{{
		Scenario: "s", Variant: "x|y", Contender: "c_d", Metric: "acquire_p50", Unit: "us", Label: "acquire *p50*",
		Old: benchmath.Summary{Center: 2_390_000, Lo: 2_300_000, Hi: 2_400_000}, New: benchmath.Summary{Center: 2_500_000, Lo: 2_400_000, Hi: 2_600_000},
		OldN: 6, NewN: 6, P: 0.01, Alpha: 0.05, Delta: "+4.60%", Direction: "worse",
	}}}
	var b bytes.Buffer
	if err := c.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	var row string
	for line := range strings.Lines(b.String()) {
		if strings.HasPrefix(line, "| s |") {
			row = line
		}
	}
	cells := strings.Split(strings.ReplaceAll(strings.TrimSpace(row), `\|`, "¦"), "|")
	want := []string{"s", "x¦y", `c\_d`, `acquire \*p50\*`, "s", "2.39 ± 4%", "2.50 ± 4%", "+4.60% (worse)", "p=0.010 n=6"}
	if len(cells) != len(want)+2 {
		t.Fatalf("row %q: %d cells, want %d", row, len(cells)-2, len(want))
	}
	for i, w := range want {
		if got := strings.TrimSpace(cells[i+1]); got != w {
			t.Errorf("cell %d = %q, want %q (row %q)", i, got, w, row)
		}
	}
}
