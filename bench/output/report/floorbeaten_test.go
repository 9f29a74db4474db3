package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/contenders/floors"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/results"
)

// floorBeatenFixture is a synthetic run (made-up figures, labelled as a
// fixture) of the throughput scenario where monolock beats the tcp-floor
// at 16 workers in every repetition (the figures of a quick local run,
// 8,932 against 5,912 locks/s).
func floorBeatenFixture() *results.Results {
	start := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	tm := results.ThroughputMetrics
	var raw []results.Raw
	for rep, f := range []float64{0.99, 1, 1.01} {
		for _, x := range []struct {
			c, v string
			rate float64
		}{{"monolock", "distinct-w16", 8932}, {"tcp-floor", "distinct-w16", 5912}} {
			raw = append(raw, results.Raw{Scenario: "throughput", Contender: x.c, Variant: x.v, Repetition: rep + 1, StartedAt: start, Seconds: 1,
				Metrics: []results.Metric{tm.CyclesPerSec.Of(f * x.rate), tm.Failures.Of(0)}})
		}
	}
	r := &results.Results{
		SchemaVersion: results.SchemaVersion, RunID: "fixture-floor-beaten", StartedAt: start, FinishedAt: start.Add(time.Minute),
		Environment: results.Environment{CPUModel: "synthetic fixture, not a measurement", Cores: 2, GOMAXPROCS: 2, Backend: "local"},
		Parameters: results.Parameters{Repetitions: 3, Scenarios: []string{"throughput"}, Contenders: []string{"monolock", "tcp-floor"},
			Contender: map[string]results.Settings{"monolock": monolock.Settings(), "tcp-floor": floors.TCPSettings()}},
		Contenders: []results.ContenderInfo{monolock.Contender().Info(), floors.TCP().Info()},
		Claims:     append(monolock.Contender().Claims, floors.TCP().Claims...),
		Raw:        raw,
		Summary:    results.Summarize(raw),
	}
	return declared(r)
}

// A figure that beats its floor is flagged as such, in the scenario's
// reading and in the claim that compares with the floor, and no ratio to
// the floor is printed for it. Against testdata/floor-beaten.golden.md (go test -update
// rewrites it).
func TestFloorBeatenGolden(t *testing.T) {
	r := floorBeatenFixture()
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(section(string(rep.Markdown), "Throughput of short locks"))
	for _, c := range analysis.New(r).Claims() {
		if c.ID == monolock.ThroughputTarget("monolock").ID {
			b.WriteString("\n" + c.ID + ": " + string(c.Verdict) + ": " + c.Evidence + "\n")
		}
	}
	got := []byte(b.String())
	path := filepath.Join("testdata", "floor-beaten.golden.md")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./bench/output/report -run TestFloorBeatenGolden -update, then review):\n%s", path, firstDiff(want, got))
	}
	for _, w := range []string{
		"Above the floor of their kind in every repetition: monolock 8,932/s",
		"target-throughput-monolock: inconclusive:",
		"beaten in every repetition: no ratio",
	} {
		if !strings.Contains(string(got), w) {
			t.Errorf("lacks %q:\n%s", w, got)
		}
	}
}
