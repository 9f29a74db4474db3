package report

import (
	"fmt"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// claimsPerProfile lays out the run's claims as checked under each
// profile: those whose verdict differs between profiles in the report,
// every decided one in the details.
func claimsPerProfile(d *document, r *results.Results, runs []profileRun) {
	if len(r.Claims) == 0 {
		return
	}
	as := make([]*analysis.Run, len(runs))
	head := []string{"claim"}
	for i, pr := range runs {
		as[i] = pr.Run
		head = append(head, pr.Network.Profile)
	}
	differ, all := table{head: head}, table{head: head}
	open, same := 0, 0
	for _, c := range analysis.ClaimsAcross(as) {
		row := []cell{{text: c.Each[0].Statement}}
		for _, x := range c.Each {
			row = append(row, cell{text: string(x.Verdict), class: string(x.Verdict), title: x.Evidence})
		}
		switch {
		case !c.Decided():
			open++
			continue
		case c.Differs():
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
