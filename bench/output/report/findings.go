package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// findings lead a scenario's section: what its capabilities showed, good
// and bad (the locks that showed each and those that did not, with the
// figure), and the promises and targets of the scenario that failed. A
// statement about another system that the run contradicts is not a
// finding (it is "not observed in this run" in the claims).
func (f *figures) findings(d *document, s string, claims []Claim) {
	var items []string
	info, _ := f.r.Scenario(s)
	var ids []string
	for _, dec := range info.Decides {
		if dec.Op != "" && !slices.Contains(ids, dec.ID) {
			ids = append(ids, dec.ID)
		}
	}
	for _, id := range ids {
		// every declaration of the capability in this scenario: one
		// variant may show what another does not (a standby's takeover)
		var ds []decl
		for _, x := range info.Decides {
			if x.ID == id {
				ds = append(ds, decl{s, x})
			}
		}
		var yes, no []string
		for _, c := range f.locks(s) {
			j := f.combined(c, ds)
			switch j.mark {
			case markYes:
				yes = append(yes, c)
			case markNo:
				no = append(no, c+" ("+j.short+")")
			}
		}
		var shown []string
		if len(no) > 0 {
			shown = append(shown, "✗ "+strings.Join(no, ", "))
		}
		if len(yes) > 0 {
			shown = append(shown, "✓ "+strings.Join(yes, ", "))
		}
		if len(shown) > 0 {
			items = append(items, fmt.Sprintf("%s: %s.", shortLabel(f.capabilityLabelIn(info, id)), strings.Join(shown, "; ")))
		}
	}
	for _, c := range claims {
		if c.scenario == s && failed(c) {
			what := "promise"
			if kindOf(c) == results.ClaimTarget {
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

// capabilityLabelIn is a capability's text as the scenario declares it.
func (f *figures) capabilityLabelIn(info results.ScenarioInfo, id string) string {
	for _, x := range info.Decides {
		if x.ID == id {
			return x.Text
		}
	}
	return id
}
