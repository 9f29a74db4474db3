package report

import (
	"fmt"

	"github.com/monolock/monolock-bench/bench/analysis"
)

// Marks of a capability cell.
const (
	markYes  = "✓"
	markNo   = "✗"
	markNone = "–"
)

// verdictCell lays out an analysis verdict as a matrix cell: its mark
// and figure, the evidence in the title. A verdict at another condition
// than the others' shows its reason, never a mark.
func verdictCell(j analysis.Verdict) cell {
	switch j.Mark {
	case analysis.Holds:
		return cell{text: markText(markYes, j.Short), class: string(Holds), title: j.Detail}
	case analysis.Fails:
		return cell{text: markText(markNo, j.Short), class: string(Fails), title: j.Detail}
	case analysis.NotComparable, analysis.NoEvidence:
		return cell{text: j.Short, class: string(Inconclusive), title: j.Detail}
	}
	return cell{text: markNone, class: string(Inconclusive), title: j.Detail}
}

func markText(mark, short string) string {
	if short == "" {
		return mark
	}
	return mark + " " + short
}

// capabilityMatrix writes a row per lock and a column per capability,
// each cell as the analysis judged it (✓, ✗, not comparable, or – not
// measured) with its figure, the evidence in the cell's title.
func (f *figures) capabilityMatrix(d *document) {
	ids := f.a.MatrixIDs()
	if len(ids) == 0 {
		return
	}
	t := table{head: []string{"lock"}}
	var legend []string
	for i, id := range ids {
		t.head = append(t.head, fmt.Sprintf("C%d", i+1))
		legend = append(legend, fmt.Sprintf("C%d: %s", i+1, f.a.Label(id)))
	}
	for _, c := range f.a.Locks() {
		row := []cell{{text: c}}
		measured := false
		for _, id := range ids {
			j := f.a.Capability(c, id)
			measured = measured || j.Mark != analysis.NotMeasured
			row = append(row, verdictCell(j))
		}
		if measured {
			t.rows = append(t.rows, row)
		}
	}
	if len(t.rows) == 0 {
		return
	}
	d.h3("What each lock did in this run")
	d.p("✓ the capability held in every repetition (the worst is shown), ✗ it did not (“never”: no grant within the trial's bound), – not measured; “not comparable”: measured only at an easier condition than the others; “no evidence”: the trials never reached their fault; neither is a pass. Each cell's figure and n are in its title (hover in report.html) and in the sections below.")
	d.add(list{items: legend})
	d.add(t)
}
