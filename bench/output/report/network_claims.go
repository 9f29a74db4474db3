package report

import (
	"fmt"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// claimsPerProfile checks the run's claims under each profile: those
// whose verdict differs between profiles in the report, every decided one
// in the details.
func claimsPerProfile(d *document, r *results.Results, runs []profileRun) {
	if len(r.Claims) == 0 {
		return
	}
	per := make([][]analysis.Claim, len(runs))
	for i, pr := range runs {
		per[i] = analysis.New(r.UnderNetwork(pr.nr.Label())).Claims()
	}
	head := []string{"claim"}
	for _, pr := range runs {
		head = append(head, pr.nr.Profile)
	}
	differ, all := table{head: head}, table{head: head}
	open, same := 0, 0
	for j := range per[0] {
		row := []cell{{text: per[0][j].Statement}}
		decided, differs := false, false
		var first analysis.ClaimVerdict
		for i := range runs {
			c := per[i][j]
			row = append(row, cell{text: string(c.Verdict), class: string(c.Verdict), title: c.Evidence})
			if c.Verdict == analysis.ClaimInconclusive {
				continue // not measured under this profile: no change of verdict
			}
			if first == "" {
				first = c.Verdict
			}
			decided = true
			differs = differs || c.Verdict != first
		}
		switch {
		case !decided:
			open++
			continue
		case differs:
			differ.rows = append(differ.rows, row)
		default:
			same++
		}
		all.rows = append(all.rows, row)
	}
	d.h3("Claims checked per profile")
	text := fmt.Sprintf("Every claim evaluated against each profile's figures alone, with the same rules as the claims section (which checks the first profile). %d claim(s) change their verdict with the profile; %d keep it under every profile that decides them and %d are inconclusive under every one (mostly: their scenarios did not run). Those that change, and every decided claim per profile: see the details.", len(differ.rows), same, open)
	d.p(text)
	if len(differ.rows) > 0 {
		d.details("Network: the claims whose verdict changes with the profile", func(d *document) { d.add(differ) })
	}
	if len(all.rows) > 0 {
		d.details("Network: every claim per profile", func(d *document) { d.add(all) })
	}
}
