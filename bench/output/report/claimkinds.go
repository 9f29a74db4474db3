package report

import (
	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// contradicted is how a report shows a statement about another system
// that the run contradicts (analysis.Claim.Contradicted), with the figure
// (contradictedBy). It is no failure of the project's lock, and never
// "not observed", which reads as "not tested".
const contradicted = "contradicted"

// contradictedBy is the verdict of a contradicted claim with its figure:
// "contradicted: 2.11 s".
func contradictedBy(c analysis.Claim) string {
	if c.Figure == "" {
		return contradicted
	}
	return contradicted + ": " + c.Figure
}

// claimKinds are the kinds of claim in the order the report shows them,
// with their headings.
var claimKinds = []struct{ kind, heading, short, intro string }{
	{results.ClaimPromise, "Promises of the project's lock", "promise", "What the project's own comparison page promises; a promise that fails here is a finding."},
	{results.ClaimOther, "Statements about other systems", "other system", "What the comparison page says of the other systems, from their documentation or design; where this run saw something else, the statement is " + contradicted + " (with the figure), which is no failure of the project's lock."},
	{results.ClaimTarget, "Targets and method checks", "target", "Aims of the project and checks of the method; a target not met is work to do."},
}

// shownVerdict is a claim's verdict as the report prints it.
func shownVerdict(c analysis.Claim) cell {
	if c.Contradicted() {
		return cell{text: contradictedBy(c), class: string(c.Verdict)}
	}
	return cell{text: string(c.Verdict), class: string(c.Verdict)}
}

// claimTables writes one table per kind of claim, each with its tally.
func (f *figures) claimTables(d *document, claims []analysis.Claim) {
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
