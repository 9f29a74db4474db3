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
// and the cell the analysis wrote, which says what it counts ("✓ 0 stale
// writes accepted"), with the repetitions behind it when showN; the
// evidence in the title. A verdict at another condition than the others',
// or without evidence, shows its reason, never a mark.
func verdictCell(j analysis.Verdict, showN bool) cell {
	text := j.Cell
	if n := j.Entry.Condition.Repetitions; showN && n > 0 {
		text += fmt.Sprintf(" (n=%d)", n)
	}
	switch j.Mark {
	case analysis.Holds:
		return cell{text: markYes + " " + text, class: "holds", title: j.Detail}
	case analysis.Fails:
		return cell{text: markNo + " " + text, class: "fails", title: j.Detail}
	case analysis.NotComparable, analysis.NoEvidence:
		return cell{text: text, class: "inconclusive", title: j.Detail}
	}
	return cell{text: markNone, class: "inconclusive", title: j.Detail}
}

// capabilityMatrix writes a row per lock and a column per capability,
// each cell as the analysis judged it (✓, ✗, not comparable, no evidence,
// or – not measured) with what it counts. The repetitions behind a
// column's cells are in its heading when they are the same for every
// lock, else in each cell.
func (f *figures) capabilityMatrix(d *document) {
	ids := f.a.MatrixIDs()
	if len(ids) == 0 {
		return
	}
	locks := f.a.Locks()
	verdicts := make(map[string][]analysis.Verdict, len(locks))
	for _, c := range locks {
		for _, id := range ids {
			verdicts[c] = append(verdicts[c], f.a.Capability(c, id))
		}
	}
	t := table{head: []string{"lock"}}
	var legend []string
	perCell := make([]bool, len(ids))
	for i, id := range ids {
		ns := map[int]bool{}
		for _, c := range locks {
			if n := verdicts[c][i].Entry.Condition.Repetitions; n > 0 {
				ns[n] = true
			}
		}
		head := fmt.Sprintf("C%d", i+1)
		if len(ns) == 1 {
			for n := range ns {
				head += fmt.Sprintf(" (n=%d)", n)
			}
		}
		perCell[i] = len(ns) > 1
		t.head = append(t.head, head)
		legend = append(legend, fmt.Sprintf("C%d: %s", i+1, f.a.Label(id)))
	}
	for _, c := range locks {
		row := []cell{{text: c}}
		measured := false
		for i, j := range verdicts[c] {
			measured = measured || j.Mark != analysis.NotMeasured
			row = append(row, verdictCell(j, perCell[i]))
		}
		if measured {
			t.rows = append(t.rows, row)
		}
	}
	if len(t.rows) == 0 {
		return
	}
	d.h3("What each lock did in this run")
	d.p("✓ held in every repetition, ✗ did not; a cell gives the worst repetition and what it counts, n the repetitions (in the heading when alike). “never (> bound)”: no grant within the trial's bound; “no evidence”: the trials never reached their fault; “not comparable”: measured at an easier condition only; neither passes nor fails. –: not measured.")
	d.add(list{items: legend})
	d.add(t)
}
