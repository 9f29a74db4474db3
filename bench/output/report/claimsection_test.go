package report

import (
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// The claims section of report.md reads the claims by kind: a statement
// about another system that the run contradicts is "contradicted" with
// its figure, never "not observed" (which reads as "not tested"), in the
// rows and in the tallies; each row names whom the claim
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
		"| other system | redlock | Redlock keeps granting with two of five masters down. | contradicted: 2.11 s |",
		"| other system | redlock-fast | Redlock keeps granting with two of five masters down. | holds |",
		"| promise | monolock | Acquisition latency is almost the same as Redis SET NX. | fails |",
		"Statements about other systems: 1 of 5 hold, 1 contradicted, 3 inconclusive.",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("claims section lacks %q:\n%s", w, md)
		}
	}
	// Which setting gave which figure: in the appendix.
	for _, w := range []string{
		"redlock (read\\_timeout 1s): redlock minority-down longest stretch without a grant 2.11 s",
		"redlock-fast (read\\_timeout 50ms): redlock-fast minority-down longest stretch without a grant 113.1 ms",
	} {
		if !strings.Contains(string(rep.Details), w) {
			t.Errorf("the claims' appendix lacks %q", w)
		}
	}
	if strings.Contains(md, "not observed") {
		t.Errorf("a contradicted claim reads as not tested:\n%s", md)
	}
	if strings.Contains(md, "| redlock | Redlock keeps granting with two of five masters down. | fails |") {
		t.Error("a contradicted statement about another system is shown as a failure")
	}
}

// A claim whose at-most limit is not below its trial's own grant bound
// can never be seen to fail (a waiter that never got the lock has no
// figure): a 6 s claim behind the handover trials' 5 s give-up (2 leases
// + 1 s at a 2 s lease) is a defect of the claim, inconclusive with the
// reason, while a 2.2 s claim on the same trials stands.
func TestUnreachableClaimLimit(t *testing.T) {
	r := synthetic([]fig{{"handover", "monolock", "freeze", "max", "ms", []float64{1990, 1980}}}, nil)
	rule := results.ClaimRule{ID: "six-seconds", Claim: "A frozen holder is freed within six seconds.", Statement: "freeze: the slowest trial is at most 6 s.",
		Scenario: "handover", Variant: "freeze", Subject: "monolock", Metric: "max", Op: results.AtMost, Than: results.ClaimBound{Value: 6000}}
	tight := rule
	tight.ID, tight.Than.Value = "lease-and-a-tenth", 2200
	r.Claims = []results.ClaimRule{rule, tight}
	got := analysis.New(r).Claims()
	if got[0].Verdict != analysis.ClaimInconclusive || !strings.Contains(got[0].Evidence, "defect of the claim: its limit 6 s is not below the trial's own grant bound 5s") {
		t.Errorf("6 s behind a 5 s bound: %s: %s", got[0].Verdict, got[0].Evidence)
	}
	if got[1].Verdict != analysis.ClaimHolds || strings.Contains(got[1].Evidence, "defect") {
		t.Errorf("2.2 s behind a 5 s bound: %s: %s", got[1].Verdict, got[1].Evidence)
	}
}
