package report

import (
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// Every capability cell says what it counts, so that a ✓ 0 and a ✗ 0 in
// neighbouring columns cannot be read as the same figure; n shows in the
// text, not only in a hover title; a trial that never reached its fault
// is no evidence, never a ✗ (issue 36, problem 5). Hand-made figures.
func TestCapabilityCellsSayWhatTheyCount(t *testing.T) {
	fo, sm, cm := results.FailoverMetrics, results.ScaleMetrics, results.ChaosMetrics
	var raw []results.Raw
	add := func(scenario, c, v string, reps int, ms ...results.Metric) {
		for rep := 1; rep <= reps; rep++ {
			raw = append(raw, results.Raw{Scenario: scenario, Contender: c, Variant: v, Repetition: rep, Metrics: ms})
		}
	}
	// alpha: no grant while its one server was down (✗ 0), no double
	// grant after a restart without data (✓ 0).
	add("failover", "alpha", "restart", 2, metric(fo.UnavailableMs.Name, "ms", 3200), metric(fo.GrantsWhileDown.Name, "count", 0))
	add("failover", "alpha", "restart-unsafe", 2, metric(fo.DoubleGrants.Name, "count", 0))
	// beta: a cluster that kept granting with a minority down.
	add("failover", "beta", "minority-down", 2, metric(fo.UnavailableMs.Name, "ms", 2110), metric(fo.GrantsWhileDown.Name, "count", 8))
	add("failover", "beta", "restart-unsafe", 2, metric(fo.DoubleGrants.Name, "count", 2))
	add("scale", "alpha", "idle-max-lease2s", 2, metric(sm.SessionsReached.Name, "count", 19734), metric(sm.Sessions.Name, "count", 19734))
	add("scale", "beta", "idle-max-lease2s", 2, metric(sm.SessionsReached.Name, "count", 5251), metric(sm.Sessions.Name, "count", 19734))
	// Under chaos, alpha's running clients never overlapped; beta's
	// holder kept the lock through every fault: no grant, no evidence.
	add("chaos", "alpha", "soak", 1, metric(cm.DoubleHoldersRunning.Name, "count", 0), metric(cm.NoHandoverDuringHolderFault.Name, "bool", 0))
	add("chaos", "beta", "soak", 1, metric(cm.DoubleHoldersRunning.Name, "count", 0), metric(cm.NoHandoverDuringHolderFault.Name, "bool", 1))
	md := comparableRun(t, []string{"failover", "scale", "chaos"}, []results.ContenderInfo{{Name: "alpha"}, {Name: "beta"}}, raw)
	matrix := md[strings.Index(md, "### What each lock did in this run"):]
	head := rowOf(matrix, "| lock |")
	for _, w := range []string{"| C1 (n=2) |", "| C2 (n=2) |", "| C3 (n=2) |", "| C4 (n=1) |"} {
		if !strings.Contains(head, w) {
			t.Errorf("the matrix heading lacks %q: %s", w, head)
		}
	}
	for _, w := range []string{
		"| alpha | ✗ 0 grants while down | ✓ 0 double grants | ✓ 19,734 of 19,734 held | ✓ 0 running double holders |",
		"| beta | ✗ no grant for 2.11 s | ✗ 2 double grants | ✗ 5,251 of 19,734 held | no evidence: did not grant |",
	} {
		if !strings.Contains(matrix, w) {
			t.Errorf("the matrix lacks %q:\n%s", w, matrix)
		}
	}
}

// report.md itself says what its terms mean, not only the appendix: the
// capability ids, learn-first margin, D, floors, w1 and n8, promotion and
// "~" (issue 36, problem 9).
func TestReportDefinesItsTerms(t *testing.T) {
	rep, err := Render(loadFullRun(t))
	if err != nil {
		t.Fatal(err)
	}
	_, terms, ok := strings.Cut(string(rep.Markdown), "\n## Terms\n")
	if !ok {
		t.Fatal("report.md has no terms")
	}
	for _, w := range []string{"- C1–C11: ", "- ~: a tie", "learn-first margin: ", "D: a standby's detection", "floor: ", "w1, w8: ", "n8: ", "promotion: "} {
		if !strings.Contains(terms, w) {
			t.Errorf("report.md's terms lack %q:\n%s", w, terms)
		}
	}
}
