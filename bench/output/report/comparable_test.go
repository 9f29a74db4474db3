package report

import (
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// comparableRun is a hand-made run (made-up figures) of the given raw
// records, every lock at lease 2s, with today's declarations.
func comparableRun(t *testing.T, scenarios []string, contenders []results.ContenderInfo, raw []results.Raw) string {
	t.Helper()
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var names []string
	settings := map[string]results.Settings{}
	for _, c := range contenders {
		names = append(names, c.Name)
		settings[c.Name] = results.Settings{"lease": "2s"}
	}
	for i := range raw {
		raw[i].StartedAt, raw[i].Seconds = start, 1
	}
	r := declared(&results.Results{
		SchemaVersion: results.SchemaVersion, RunID: "fixture-comparable", StartedAt: start, FinishedAt: start.Add(time.Hour),
		Environment: results.Environment{CPUModel: "synthetic fixture, not a measurement", Cores: 2, GOMAXPROCS: 2, Backend: "local"},
		Parameters:  results.Parameters{Repetitions: 2, Scenarios: scenarios, Contenders: names, Contender: settings},
		Contenders:  contenders,
		Raw:         raw,
		Summary:     results.Summarize(raw),
	})
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	return section(string(rep.Markdown), "Which lock for which job")
}

func metric(name, unit string, v float64) results.Metric {
	return results.Metric{Name: name, Unit: unit, Value: v}
}

// A capability is judged at one condition: a lock capped at 1,000
// sessions, where the others ran at the largest count, is not
// comparable, never ✓ (issue 36, problem 2: etcd "✓ 1000" beside
// monolock's "✗ 5251 of 19,734").
func TestCapabilityAtASmallerLoadIsNotComparable(t *testing.T) {
	sm := results.ScaleMetrics
	var raw []results.Raw
	idle := func(c, v string, reached, of float64) {
		for rep := 1; rep <= 2; rep++ {
			raw = append(raw, results.Raw{Scenario: "scale", Contender: c, Variant: v, Repetition: rep,
				Metrics: []results.Metric{metric(sm.SessionsReached.Name, "count", reached), metric(sm.Sessions.Name, "count", of)}})
		}
	}
	capped := func(c, v string) {
		for rep := 1; rep <= 2; rep++ {
			raw = append(raw, results.Raw{Scenario: "scale", Contender: c, Variant: v, Repetition: rep, Skipped: "capped: lost most sessions at 10k"})
		}
	}
	for _, c := range []string{"alpha", "beta", "gamma"} {
		idle(c, "idle-1k-lease2s", 1000, 1000)
	}
	idle("alpha", "idle-max-lease2s", 19734, 19734)
	idle("beta", "idle-max-lease2s", 612, 19734)
	capped("gamma", "idle-max-lease2s")
	md := comparableRun(t, []string{"scale"}, []results.ContenderInfo{{Name: "alpha"}, {Name: "beta"}, {Name: "gamma"}}, raw)
	row := func(c string) string {
		for _, l := range strings.Split(md, "\n") {
			if strings.HasPrefix(l, "| "+c+" |") {
				return l
			}
		}
		t.Fatalf("no matrix row of %s:\n%s", c, md)
		return ""
	}
	if r := row("alpha"); !strings.Contains(r, "✓ 19,734") {
		t.Errorf("alpha held every session at the largest count: want ✓ 19,734 in %q", r)
	}
	if r := row("beta"); !strings.Contains(r, "✗ 612") {
		t.Errorf("beta held 612 of 19,734: want ✗ 612 in %q", r)
	}
	r := row("gamma")
	if strings.Contains(r, "✓") {
		t.Errorf("gamma ran at 1,000 sessions only: no ✓ at the largest count, got %q", r)
	}
	if !strings.Contains(r, "not comparable: tested at 1,000 sessions") {
		t.Errorf("gamma's cell must say it is not comparable and why, got %q", r)
	}
	if !strings.Contains(md, "gamma, C1 not comparable: tested at 1,000 sessions") {
		t.Errorf("the idle-sessions use case must say why gamma is not picked:\n%s", md)
	}
}

// A ranking compares one fault: the clusters by a minority down, the
// fault under which the row's capability says they keep granting, never
// by their whole restarts, and a standby pair's loss of its primary is
// not ranked against either (issue 36, problem 1: monolock-standby's
// primary-lost-fast 344.9 ms "9× better" than redlock-fast's and etcd's
// restarts); the row says which fault it compares and shows the other,
// unranked, with its fault.
func TestCoordinatorFailureRanksOneFault(t *testing.T) {
	fo := results.FailoverMetrics
	var raw []results.Raw
	add := func(c, v string, ms ...results.Metric) {
		for rep := 1; rep <= 2; rep++ {
			raw = append(raw, results.Raw{Scenario: "failover", Contender: c, Variant: v, Repetition: rep, Metrics: ms})
		}
	}
	for c, f := range map[string]float64{"alpha": 1, "beta": 1.05} {
		add(c, "restart", metric(fo.UnavailableMs.Name, "ms", 3200*f), metric(fo.GrantsWhileDown.Name, "count", 0), metric(fo.GrantRateAfterRatio.Name, "ratio", 1))
		add(c, "minority-down", metric(fo.UnavailableMs.Name, "ms", 23*f), metric(fo.GrantsWhileDown.Name, "count", 1900))
		add(c, "restart-unsafe", metric(fo.DoubleGrants.Name, "count", 0))
	}
	add("standby", "primary-lost-fast", metric(fo.UnavailableMs.Name, "ms", 345), metric(fo.GrantsWhileDown.Name, "count", 0),
		metric(fo.DoubleGrants.Name, "count", 0), metric(fo.GrantRateAfterRatio.Name, "ratio", 0.93), metric(fo.DetectionMs.Name, "ms", 273))
	md := comparableRun(t, []string{"failover"}, []results.ContenderInfo{{Name: "alpha"}, {Name: "beta"}, {Name: "standby"}}, raw)
	var row string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| The coordinator itself may fail") {
			row = l
		}
	}
	if row == "" {
		t.Fatalf("no coordinator-failure row:\n%s", md)
	}
	if strings.Contains(row, "standby 345 ms (n=2), then") || strings.Contains(row, "| standby |") {
		t.Errorf("the standby's primary loss is ranked against the clusters' restarts: %q", row)
	}
	for _, w := range []string{
		"| use alpha or beta (a tie); standby qualifies too, not comparable: tested with another fault: primary-lost. |",
		"medians in minority-down: alpha 23 ms (n=2) ~ beta 24.2 ms (n=2).",
		"Not ranked: standby, median 345 ms (n=2) in primary-lost-fast (fault primary-lost).",
	} {
		if !strings.Contains(row, w) {
			t.Errorf("the row lacks %q:\n%s", w, row)
		}
	}
}
