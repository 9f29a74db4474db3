package analysis

import (
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// A statement about another system that the run contradicts is no
// failure of the project's lock; a promise or a target that fails is.
func TestClaimContradictedIsNoFailure(t *testing.T) {
	for _, tt := range []struct {
		kind                 string
		verdict              ClaimVerdict
		failed, contradicted bool
	}{
		{"", ClaimFails, true, false},
		{results.ClaimTarget, ClaimFails, true, false},
		{results.ClaimOther, ClaimFails, false, true},
		{results.ClaimOther, ClaimHolds, false, false},
		{results.ClaimPromise, ClaimInconclusive, false, false},
	} {
		c := Claim{Kind: tt.kind, Verdict: tt.verdict}
		if c.Failed() != tt.failed || c.Contradicted() != tt.contradicted {
			t.Errorf("%q %s: failed %v, contradicted %v; want %v, %v", tt.kind, tt.verdict, c.Failed(), c.Contradicted(), tt.failed, tt.contradicted)
		}
	}
}

// Across profiles a claim changes its verdict only where two profiles
// decide it differently; a profile that leaves it inconclusive changes
// nothing.
func TestClaimAcrossProfiles(t *testing.T) {
	across := func(vs ...ClaimVerdict) ClaimAcross {
		var c ClaimAcross
		for _, v := range vs {
			c.Each = append(c.Each, Claim{Verdict: v})
		}
		return c
	}
	for _, tt := range []struct {
		name             string
		c                ClaimAcross
		decided, differs bool
	}{
		{"open everywhere", across(ClaimInconclusive, ClaimInconclusive), false, false},
		{"same where decided", across(ClaimHolds, ClaimInconclusive, ClaimHolds), true, false},
		{"flips", across(ClaimInconclusive, ClaimHolds, ClaimFails), true, true},
	} {
		if tt.c.Decided() != tt.decided || tt.c.Differs() != tt.differs {
			t.Errorf("%s: decided %v, differs %v; want %v, %v", tt.name, tt.c.Decided(), tt.c.Differs(), tt.decided, tt.differs)
		}
	}
}
