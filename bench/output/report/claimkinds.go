package report

import (
	"fmt"

	"github.com/monolock/monolock-bench/bench/results"
)

// contradicted is how a report shows a statement about another system
// that the run contradicts: the run saw something else than that
// system's documentation says, with the figure (contradictedBy). It is
// no failure of the project's lock, and never "not observed", which
// reads as "not tested".
const contradicted = "contradicted"

// contradictedBy is the verdict of a contradicted claim with its figure:
// "contradicted: 2.11 s".
func contradictedBy(c Claim) string {
	if c.figure == "" {
		return contradicted
	}
	return contradicted + ": " + c.figure
}

// claimKinds are the kinds of claim in the order the report shows them,
// with their headings.
var claimKinds = []struct{ kind, heading, short, intro string }{
	{results.ClaimPromise, "Promises of the project's lock", "promise", "What the project's own comparison page promises; a promise that fails here is a finding."},
	{results.ClaimOther, "Statements about other systems", "other system", "What the comparison page says of the other systems, from their documentation or design; where this run saw something else, the statement is " + contradicted + " (with the figure), which is no failure of the project's lock."},
	{results.ClaimTarget, "Targets and method checks", "target", "Aims of the project and checks of the method; a target not met is work to do."},
}

// kindOf reads a claim's kind; "" is a promise.
func kindOf(c Claim) string {
	if c.Kind == "" {
		return results.ClaimPromise
	}
	return c.Kind
}

// failed reports whether a claim is a failure a reader must weigh: a
// promise or a target that fails, never a statement about another system.
func failed(c Claim) bool { return c.Verdict == Fails && kindOf(c) != results.ClaimOther }

// shownVerdict is a claim's verdict as the report prints it.
func shownVerdict(c Claim) cell {
	if c.Verdict == Fails && kindOf(c) == results.ClaimOther {
		return cell{text: contradictedBy(c), class: string(Fails)}
	}
	return cell{text: string(c.Verdict), class: string(c.Verdict)}
}

// claimTables writes one table per kind of claim, each with its tally.
func (f *figures) claimTables(d *document, claims []Claim) {
	for _, k := range claimKinds {
		of := claimsOfKind(claims, k.kind)
		if len(of) == 0 {
			continue
		}
		d.h3(k.heading)
		d.p(k.intro)
		t := table{head: []string{"claim", "testable statement", "verdict", "measured", "threshold"}, leftAligned: true, cards: true}
		for _, c := range of {
			t.rows = append(t.rows, []cell{{text: c.Claim}, {text: c.Statement}, shownVerdict(c), {text: c.Evidence}, {text: c.Threshold}})
		}
		d.add(t)
		d.p(tallyText(of, k.kind) + ".")
	}
}

// unreachable returns why a claim's limit cannot be tested, or "": an
// at-most limit at or above the grant bound of the trial it judges (a 6 s
// claim behind a 5 s give-up) can never fail by a trial whose waiter
// never got the lock, so it is a defect of the claim, not a verdict.
func (f *figures) unreachable(rule results.ClaimRule, variant, unit string, limit float64) string {
	p := f.params(rule.Scenario, variant)
	per, ok := nanoseconds[unit]
	if rule.Op != results.AtMost || p.GrantBound == nil || !ok {
		return ""
	}
	lease, ok := f.duration(rule.Subject, "lease")
	if !ok {
		return ""
	}
	b := p.GrantBound.At(lease)
	if bound := float64(b.Nanoseconds()) / per; limit >= bound {
		return fmt.Sprintf("defect of the claim: its limit %s is not below the trial's own grant bound %s, so a trial can never show it exceeded", results.Format(limit, unit), b)
	}
	return ""
}
