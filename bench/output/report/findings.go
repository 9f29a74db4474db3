package report

import (
	"fmt"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// findings lead a scenario's section: what its capabilities showed, good
// and bad (the locks that did not show each, with the figure, and
// those that did: by name when few, else how many, whose names the
// capability matrix gives), and the promises and targets of the scenario
// that failed. A
// statement about another system that the run contradicts is not a
// finding (it is "contradicted" in the claims).
// namedPasses is how many locks a finding names as passing; more are
// counted, the matrix names them.
const namedPasses = 3

func (f *figures) findings(d *document, s string, claims []analysis.Claim) {
	var items []string
	for _, id := range f.a.CapabilityIDsIn(s) {
		// every declaration of the capability in this scenario: one
		// variant may show what another does not (a standby's takeover)
		var yes, no, none []string
		for _, c := range f.locks(s) {
			switch j := f.a.CapabilityIn(c, s, id); j.Mark {
			case analysis.Holds:
				yes = append(yes, c)
			case analysis.Fails:
				no = append(no, c+" ("+j.Short+")")
			case analysis.NoEvidence:
				none = append(none, c+" ("+strings.TrimPrefix(j.Short, "no evidence: ")+")")
			}
		}
		var shown []string
		if len(no) > 0 {
			shown = append(shown, "✗ "+strings.Join(no, ", "))
		}
		switch {
		case len(yes) > namedPasses:
			shown = append(shown, fmt.Sprintf("✓ %d locks (%s in the matrix)", len(yes), f.a.Ref(id)))
		case len(yes) > 0:
			shown = append(shown, "✓ "+strings.Join(yes, ", "))
		}
		if len(none) > 0 {
			shown = append(shown, "no evidence "+strings.Join(none, ", "))
		}
		if len(shown) > 0 {
			items = append(items, fmt.Sprintf("%s: %s.", analysis.ShortLabel(f.a.LabelIn(s, id)), strings.Join(shown, "; ")))
		}
	}
	for _, c := range claims {
		if c.Scenario == s && c.Failed() {
			what := "promise"
			if c.Whose() == results.ClaimTarget {
				what = "target"
			}
			items = append(items, fmt.Sprintf("✗ %s not met: “%s” (%s).", what, c.Claim, c.Evidence))
		}
	}
	if len(items) == 0 {
		return
	}
	d.p("Findings:")
	d.add(list{items: items})
}
