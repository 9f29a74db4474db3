package report

import (
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// standbyFixture is a synthetic failover run (made-up figures, labelled
// as a fixture): "single" restarts (no double grant measured: a single
// server has no restart-unsafe), "cluster" loses a minority and double
// grants in restart-unsafe, "pair" is a standby pair whose address the
// bench's forwarder moved. detection names the pair's D figure, so that
// a file of the former name (d_ms) can be made.
func standbyFixture(detection string) *results.Results {
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	m := func(name, unit string, v float64) results.Metric {
		return results.Metric{Name: name, Unit: unit, Value: v}
	}
	var raw []results.Raw
	add := func(c, v string, rep int, counts map[string]int64, ms ...results.Metric) {
		raw = append(raw, results.Raw{Scenario: "failover", Contender: c, Variant: v, Repetition: rep, StartedAt: start, Seconds: 4, Metrics: ms, Counts: counts})
	}
	moved := map[string]int64{"address_move_forwarder": 1}
	for rep := 1; rep <= 2; rep++ {
		d := float64(rep)
		add("single", "restart", rep, nil, m("unavailable_ms", "ms", 2200+d), m("grants_while_down", "count", 0), m("grant_rate_after_ratio", "ratio", 0.9))
		add("cluster", "restart", rep, nil, m("unavailable_ms", "ms", 2500+d), m("grants_while_down", "count", 0), m("grant_rate_after_ratio", "ratio", 0.8))
		add("cluster", "minority-down", rep, nil, m("unavailable_ms", "ms", 30+d))
		add("cluster", "restart-unsafe", rep, nil, m("double_grants", "count", 1))
		add("pair", "primary-lost", rep, moved, m("unavailable_ms", "ms", 3100+d), m(detection, "ms", 2900+d), m("double_grants", "count", 0))
		add("pair", "primary-lost-fast", rep, moved, m("unavailable_ms", "ms", 350+d), m(detection, "ms", 250+d), m("double_grants", "count", 0), m("grant_rate_after_ratio", "ratio", 0.95))
		add("pair", "no-fence", rep, moved, m("unavailable_ms", "ms", 17), m("double_grants", "count", 4+d))
	}
	lease := results.Settings{"lease": "2s"}
	r := &results.Results{
		SchemaVersion: results.SchemaVersion, RunID: "fixture-standby", StartedAt: start, FinishedAt: start.Add(time.Hour),
		Environment: results.Environment{CPUModel: "synthetic fixture, not a measurement", Cores: 2, GOMAXPROCS: 2, Backend: "local"},
		Parameters: results.Parameters{Repetitions: 2, Scenarios: []string{"failover"}, Contenders: []string{"single", "cluster", "pair"},
			Contender: map[string]results.Settings{"single": lease, "cluster": lease, "pair": lease}},
		Contenders: []results.ContenderInfo{{Name: "single", Family: "s"}, {Name: "cluster", Family: "c"}, {Name: "pair", Family: "s"}},
		Raw:        raw,
		Summary:    results.Summarize(raw),
	}
	return declared(r)
}

// The failover table shows D (under either name) and marks the unfenced
// variant; the section says how the pair's address moved; the decision
// row for a failing coordinator ranks the pair by its own variants.
func TestFailoverStandbyRendering(t *testing.T) {
	for _, name := range []string{"detection_ms", "d_ms"} {
		rep, err := Render(standbyFixture(name))
		if err != nil {
			t.Fatal(err)
		}
		md := string(rep.Markdown)
		failover := section(md, "Failover of the coordinator")
		for _, w := range []string{
			"D (detection)",
			"| primary-lost-fast | pair | 0.252 (0.251–0.252) | 0.351 (0.351–0.352) | 0 | – |",
			"| no-fence (no fault: the unfenced, unsafe deployment) | pair |",
			"The standby pair's one address was the bench's TCP forwarder",
		} {
			if !strings.Contains(failover, w) {
				t.Errorf("%s: the failover section lacks %q:\n%s", name, w, failover)
			}
		}
		if strings.Contains(failover, "| no-fence (s) |") {
			t.Errorf("%s: no-fence's gap is shown as availability:\n%s", name, failover)
		}
		details := string(rep.Details)
		if !strings.Contains(details, "double grants in no-fence, the unfenced deployment") {
			t.Errorf("%s: the reading in details.md does not name no-fence as the unfenced deployment", name)
		}
		if strings.Contains(details, "the longest stretch without a grant in no-fence") {
			t.Errorf("%s: no-fence's gap is ranked as availability", name)
		}
		if name != "detection_ms" {
			continue // a file of the former name carries its own declarations
		}
		decision := section(md, "Which lock for which job")
		i := strings.Index(decision, "| The coordinator itself may fail")
		if i < 0 {
			t.Fatalf("no row for a failing coordinator:\n%s", decision)
		}
		row, _, _ := strings.Cut(decision[i:], "\n")
		for _, w := range []string{"| use pair;", "pair 351.5 ms"} {
			if !strings.Contains(row, w) {
				t.Errorf("%s: the row lacks %q:\n%s", name, w, row)
			}
		}
	}
}
