package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/scenarios"
)

// decisionFixture is a synthetic run (made-up figures, labelled as a
// fixture) of the handover and safety scenarios with four locks that show
// the failures the decision section must name as failures: alpha frees a
// frozen holder and fences; beta's waiter never got the lock within the
// trial's bound after a freeze; gamma has no fencing tokens; delta never
// granted the second client in the safety trials, so its zero stale
// writes say nothing good.
func decisionFixture() *results.Results {
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m := func(name, unit string, v float64) results.Metric {
		return results.Metric{Name: name, Unit: unit, Value: v}
	}
	var raw []results.Raw
	add := func(s, c, v string, rep int, ms ...results.Metric) {
		raw = append(raw, results.Raw{Scenario: s, Contender: c, Variant: v, Repetition: rep, StartedAt: start, Seconds: 1, Metrics: ms})
	}
	for rep := 1; rep <= 2; rep++ {
		d := float64(rep)
		for _, c := range []string{"alpha", "gamma", "delta"} {
			add("handover", c, "graceful", rep, m("p50", "ms", 1+d/10), m("max", "ms", 2+d/10), m("failed", "count", 0))
			add("handover", c, "freeze", rep, m("p50", "ms", 1700+d), m("max", "ms", 1900+d), m("failed", "count", 0))
		}
		add("handover", "beta", "graceful", rep, m("p50", "ms", 0.5+d/100), m("max", "ms", 1), m("failed", "count", 0))
		add("handover", "beta", "freeze", rep, m("failed", "count", 2))
		safety := func(c string, fenced bool, notGranted float64) {
			ms := []results.Metric{m("trials", "count", 2), m("not_granted", "count", notGranted), m("early_grants", "count", 0), m("unsafe_writes_unfenced", "count", 2)}
			if fenced {
				ms = append(ms, m("unsafe_writes_fenced", "count", 0))
			}
			add("safety", c, "pause", rep, ms...)
			add("safety", c, "host-loss", rep, m("trials", "count", 2), m("not_granted", "count", notGranted), m("never_learned", "count", 0), m("learn_first_margin_min", "ms", 400+d))
		}
		safety("alpha", true, 0)
		safety("beta", true, 0)
		safety("gamma", false, 0)
		safety("delta", true, 2)
	}
	lease := results.Settings{"lease": "2s"}
	r := &results.Results{
		SchemaVersion: results.SchemaVersion, RunID: "fixture-decision", StartedAt: start, FinishedAt: start.Add(time.Hour),
		Environment: results.Environment{CPUModel: "synthetic fixture, not a measurement", Cores: 2, GOMAXPROCS: 2, Backend: "local"},
		Parameters: results.Parameters{Repetitions: 2, Scenarios: []string{"handover", "safety"}, Contenders: []string{"alpha", "beta", "gamma", "delta"},
			Contender: map[string]results.Settings{"alpha": lease, "beta": lease, "gamma": lease, "delta": lease}},
		Contenders: []results.ContenderInfo{{Name: "alpha", Family: "a"}, {Name: "beta", Family: "b"}, {Name: "gamma", Family: "a"}, {Name: "delta", Family: "d"}},
		Raw:        raw,
		Summary:    results.Summarize(raw),
	}
	return declared(r)
}

// section returns the Markdown from the heading "## title" to the next
// level-2 heading.
func section(md, title string) string {
	_, rest, ok := strings.Cut(md, "\n## "+title+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return "## " + title + "\n" + rest
}

// The decision section and the failure rendering of the handover and
// safety sections, against testdata/decision.golden.md (go test -update
// rewrites it; review the diff).
func TestDecisionGolden(t *testing.T) {
	rep, err := Render(decisionFixture())
	if err != nil {
		t.Fatal(err)
	}
	md := string(rep.Markdown)
	var b strings.Builder
	for _, title := range []string{"Which lock for which job", "Handover", "Safety: pauses, host loss, clock jumps, fencing"} {
		s := section(md, title)
		if s == "" {
			t.Fatalf("no section %q in the report", title)
		}
		b.WriteString(s)
	}
	got := []byte(b.String())
	path := filepath.Join("testdata", "decision.golden.md")
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
		t.Errorf("%s differs (go test ./bench/output/report -run TestDecisionGolden -update, then review)\n%s", path, firstDiff(want, got))
	}
	// What the golden file must say, whatever else changes in it.
	for _, w := range []string{
		"| beta | ✗ never (&gt; 5s) |",                     // a freeze trial without a grant is a failure, in the matrix
		"| beta | 0.515 (0.510–0.520) | never (&gt; 5s) |", // and in the handover table
		// zero stale writes without a second grant is neither a pass nor a
		// failure; no second holder at all is no early one
		"| delta | ✓ freed after 1.90 s | no evidence: did not grant | ✓ 0 of 2 trials: a second holder within half a lease | no evidence: did not grant |",
		"| gamma | ✓ freed after 1.90 s | ✗ no fencing tokens |",
	} {
		if !strings.Contains(string(got), w) {
			t.Errorf("the rendering lacks %q", w)
		}
	}
}

// The chaos checkers' double holders are a capability of their own,
// judged on the overlaps whose earlier holder ran (a holder frozen past
// its lease believes it holds the lock with any lease), apart from the
// safety host-loss margin that learns-first means; and a lock that kept
// the lock through every holder fault is "no evidence: did not grant" on
// them: neither ✓ nor ✗ (issue 36, problem 5).
// alpha passes; beta had a running double holder but its holder learned
// first after a host loss; gamma never handed the lock over under a
// fault.
func TestDecisionReadsChaosVerdicts(t *testing.T) {
	r := chaosFixture(t)
	m := func(name, unit string, v float64) results.Metric {
		return results.Metric{Name: name, Unit: unit, Value: v}
	}
	// figures adds the capabilities' figures to a chaos record.
	figures := func(x results.Raw, running, noHandover, staleUnfenced float64) results.Raw {
		x.Metrics = append(slices.Clone(x.Metrics), m("double_holders_running", "count", running),
			m("no_handover_during_holder_fault", "bool", noHandover), m("stale_writes_unfenced", "count", staleUnfenced))
		if x.Chaos.Tokens {
			x.Metrics = append(x.Metrics, m("stale_writes_fenced", "count", 0))
		}
		return x
	}
	alpha, beta := r.Raw[0], r.Raw[1]
	gamma := figures(alpha, 0, 1, 0)
	gamma.Contender = "gamma"
	r.Raw = []results.Raw{figures(alpha, 0, 0, 0), figures(beta, 1, 0, 1), gamma}
	for _, c := range []string{"alpha", "beta", "gamma"} {
		for rep := 1; rep <= 2; rep++ {
			r.Raw = append(r.Raw, results.Raw{Scenario: "safety", Contender: c, Variant: scenarios.HostLoss, Repetition: rep, StartedAt: r.StartedAt, Seconds: 1,
				Metrics: []results.Metric{m("trials", "count", 2), m("not_granted", "count", 0), m("never_learned", "count", 0), m("learn_first_margin_min", "ms", 400+float64(rep))}})
		}
	}
	r.Parameters.Scenarios = []string{"safety", "chaos"}
	r.Parameters.Contenders = append(r.Parameters.Contenders, "gamma")
	r.Contenders = append(r.Contenders, results.ContenderInfo{Name: "gamma", Colour: "#2e8b57"})
	r.Scenarios = []results.ScenarioInfo{scenarios.SafetyConfig{}.Scenario().Info(false), scenarios.ChaosConfig{}.Scenario().Info(false)}
	r.Summary = results.Summarize(r.Raw)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	md := section(string(rep.Markdown), "Which lock for which job")
	for _, w := range []string{
		"- C1: fenced store rejected every stale write",
		"- C2: holder learns it lost the lock before the next grant (its host vanished; by 1 ms at least",
		"- C3: no running client believed it held the lock while another was granted it, under random faults",
		"| alpha | ✓ 0 stale writes accepted | ✓ learn-first margin 401 ms | ✓ 0 running double holders |",
		"| beta | ✗ no fencing tokens | ✓ learn-first margin 401 ms | ✗ 1 running double holders |",
		"| gamma | no evidence: did not grant | ✓ learn-first margin 401 ms | no evidence: did not grant |",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("decision section lacks %q:\n%s", w, md)
		}
	}
}
