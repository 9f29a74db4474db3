package report

import (
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/output/results"
)

// The claims section of report.md reads the claims by kind: a statement
// about another system that the run contradicts is "not observed", not a
// failure, in the rows and in the tallies; each row names whom the claim
// is about; and where the same claim was made for another setting of the
// same system (Redlock with short per-master timeouts) both stand side by
// side with what each measured.
func TestClaimsSectionByKind(t *testing.T) {
	r := synthetic([]fig{
		// the full run of 2026-12-02: redsync's default timeouts lose the
		// grants with two masters down, 50 ms ones keep them (synthetic
		// values shaped after it)
		{"failover", "redlock", "minority-down", "unavailable_ms", "ms", []float64{2105, 2110}},
		{"failover", "redlock-fast", "minority-down", "unavailable_ms", "ms", []float64{112.9, 113.3}},
		{"latency", "monolock", "w1", "acquire_p50", "us", []float64{180, 183, 185}},
		{"latency", "redis", "w1", "acquire_p50", "us", []float64{71, 74, 79}},
	}, nil)
	for i, c := range r.Claims {
		if strings.HasPrefix(c.Subject, "redlock") {
			r.Claims[i].Kind = results.ClaimOther // as the contender table labels them
		}
	}
	r.Parameters.Contender["redlock"] = results.Settings{"lease": "2s", "read_timeout": "1s", "quorum": "3"}
	r.Parameters.Contender["redlock-fast"] = results.Settings{"lease": "2s", "read_timeout": "50ms", "quorum": "3"}
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	md := section(string(rep.Markdown), "Claims checked")
	for _, w := range []string{
		"| other system | redlock | Redlock keeps granting with two of five masters down. | not observed in this run |",
		"| other system | redlock-fast | Redlock keeps granting with two of five masters down. | holds |",
		"| promise | monolock | Acquisition latency is almost the same as Redis SET NX. | fails |",
		"Statements about other systems: 1 of 5 hold, 1 not observed in this run, 3 inconclusive.",
		"redlock (read\\_timeout 1s): redlock minority-down longest stretch without a grant 2.11 s",
		"redlock-fast (read\\_timeout 50ms): redlock-fast minority-down longest stretch without a grant 113.1 ms",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("claims section lacks %q:\n%s", w, md)
		}
	}
	if strings.Contains(md, "| redlock | Redlock keeps granting with two of five masters down. | fails |") {
		t.Error("a contradicted statement about another system is shown as a failure")
	}
}
