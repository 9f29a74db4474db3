package report

import (
	"fmt"
	"slices"

	"github.com/monolock/monolock-bench/bench/analysis"
)

// guidance writes "which lock when": for each situation the locks ranked
// by the figure that decides it (analysis.Run.Leaderboards), what the
// claims checked say, then the trade-offs the contenders state that a
// benchmark run does not measure, labelled as such.
func (f *figures) guidance(d *document, claims []analysis.Claim) {
	d.h2("Which lock when")
	var measured []string
	for _, b := range f.a.Leaderboards() {
		es := b.Entries
		measured = append(measured, fmt.Sprintf("%s, best first: %s%s.", b.Situation, rankText(topOf(es)), more(es)))
	}
	measured = append(measured, f.workloadAdvice()...)
	if holds, fails, inc := analysis.TallyClaims(claims); holds+fails+inc > 0 {
		measured = append(measured, fmt.Sprintf("Of the %d claims checked, %d hold, %d fail and %d are inconclusive in this run (Claims checked names those that do not hold).", len(claims), holds, fails, inc))
	}
	if len(measured) > 0 {
		d.p("From this run's numbers (ratios to the best in parentheses):")
		d.add(list{items: measured})
	} else {
		d.p("This run has too few figures for measured advice.")
	}
	var notes []string
	for _, c := range f.contenders {
		for _, n := range f.info[c].Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	d.details("Known trade-offs that this kind of run does not measure", func(d *document) {
		if len(notes) > 0 {
			d.p("From the design of each system, as its contender states them, not from these numbers:")
			d.add(list{items: notes})
		}
	})
}
