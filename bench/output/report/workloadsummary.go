package report

import (
	"fmt"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// workloadSummary is the workload section of report.md: one table, a
// row per lock and a column per workload file, whether the lock held
// every threshold of the file in every repetition and its acquire p99
// from the intended start, then each file's description and warnings in
// short. Each file's SLOs, chart and ranking are in the appendix
// (workloadSection).
func (f *figures) workloadSummary(d *document) {
	var cols []column
	for _, v := range f.a.Variants(workloadScenario) {
		p99 := map[string]results.Row{}
		var rows []results.Row
		for _, x := range f.a.Column(workloadScenario, v, results.WorkloadMetrics.AcquireP99.Name).Figures {
			if x.Measured && !f.isFloor(x.Contender) {
				p99[x.Contender] = x.Row
				rows = append(rows, x.Row)
			}
		}
		show := rowDisplay(rows...)
		cols = append(cols, column{head: withDisplayUnit(v+": acquire p99", show), value: func(c string) (string, bool) {
			slos := f.a.SLOResults(workloadScenario, c, v)
			x, ok := p99[c]
			if len(slos) == 0 && !ok {
				return "", false
			}
			missed := 0
			for _, s := range slos {
				if s.Verdict != analysis.SLOPass {
					missed++
				}
			}
			text := markYes
			if missed > 0 {
				text = fmt.Sprintf("%s (%d of %d)", markNo, missed, len(slos))
			}
			if ok {
				text += " " + spread(x, show)
			}
			return text, true
		}})
	}
	t, ok := f.contenderTable(f.locks(workloadScenario), cols)
	if !ok {
		return
	}
	d.p("Per workload file: ✓ every threshold of the file held in every repetition, or ✗ how many did not; then its acquire p99 from each request's intended start (coordinated omission corrected). Each file's thresholds, chart and ranking are in the appendix.")
	d.add(t)
	var warnings []string
	for _, v := range f.a.Variants(workloadScenario) {
		warnings = append(warnings, f.workloadWarningLines(v)...)
	}
	if len(warnings) > 0 {
		d.p("Warnings:")
		d.add(list{items: warnings})
	}
}
