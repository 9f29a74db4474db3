package report

import (
	"fmt"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// maxFigureColumns keeps every table of figures within a 1280-px page:
// more metrics than this go into a second table.
const maxFigureColumns = 6

// column is one figure column of a table with a row per contender.
type column struct {
	head  string
	value func(contender string) (string, bool)
}

// figureColumn shows one column of the analysis as "median (min–max)"
// in the one unit that suits every contender's figure, or why a figure
// failed; head gets that unit.
func (f *figures) figureColumn(head string, col analysis.FigureColumn) column {
	var rows []results.Row
	byContender := map[string]analysis.Figure{}
	for _, x := range col.Figures {
		byContender[x.Contender] = x
		if x.Measured {
			rows = append(rows, x.Row)
		}
	}
	show := rowDisplay(rows...)
	return column{head: withDisplayUnit(head, show), value: func(c string) (string, bool) {
		x, ok := byContender[c]
		switch {
		case !ok:
			return "", false
		case x.Failed != "":
			return x.Failed, true
		}
		return f.spread(x.Row, show), true
	}}
}

// contenderTable builds a table with one row per contender that has a
// value in some column, in display order (grouped by family, floors
// last, with a heading row per group when there is more than one), and
// the columns that have a value for some contender; false when nothing
// is left.
func (f *figures) contenderTable(contenders []string, cols []column) (table, bool) {
	var shown []column
	for _, col := range cols {
		for _, c := range contenders {
			if _, ok := col.value(c); ok {
				shown = append(shown, col)
				break
			}
		}
	}
	t := table{head: []string{"contender"}}
	for _, col := range shown {
		t.head = append(t.head, col.head)
	}
	type group struct {
		name string
		rows [][]cell
	}
	var groups []group
	for _, c := range contenders {
		row := []cell{{text: c}}
		any := false
		for _, col := range shown {
			v, ok := col.value(c)
			if !ok {
				v = "–"
			}
			any = any || ok
			row = append(row, cell{text: v})
		}
		if !any {
			continue
		}
		name := f.family(c)
		if f.isFloor(c) {
			name = "floors (baselines, no lock logic)"
		}
		if len(groups) == 0 || groups[len(groups)-1].name != name {
			groups = append(groups, group{name: name})
		}
		groups[len(groups)-1].rows = append(groups[len(groups)-1].rows, row)
	}
	for _, g := range groups {
		if len(groups) > 1 {
			t.rows = append(t.rows, []cell{{text: g.name, class: groupClass}})
		}
		t.rows = append(t.rows, g.rows...)
	}
	return t, len(groups) > 0
}

// chunks splits columns into tables of at most maxFigureColumns.
func chunks(cols []column) [][]column {
	var out [][]column
	for len(cols) > maxFigureColumns {
		out = append(out, cols[:maxFigureColumns])
		cols = cols[maxFigureColumns:]
	}
	if len(cols) > 0 {
		out = append(out, cols)
	}
	return out
}

// figureTables lists every figure of a scenario (analysis.Run.FigureTables):
// per variant, a row per contender and a column per metric, then the
// contenders the variant was not measured for, and why.
func (f *figures) figureTables(d *document, s string) {
	for _, ft := range f.a.FigureTables(s) {
		var cols []column
		for _, col := range ft.Columns {
			cols = append(cols, f.figureColumn(col.Label, col))
		}
		for i, part := range chunks(cols) {
			t, ok := f.contenderTable(f.a.ContendersIn(s), part)
			if !ok {
				continue
			}
			if i == 0 {
				d.p("All figures of " + ft.Variant + ":")
			}
			d.add(t)
		}
		if len(ft.NotMeasured) > 0 {
			d.p("Not measured in " + ft.Variant + ":")
			d.add(list{items: ft.NotMeasured})
		}
	}
}

// locks lists the non-floor contenders of a scenario.
func (f *figures) locks(s string) []string {
	var out []string
	for _, c := range f.a.ContendersIn(s) {
		if !f.isFloor(c) {
			out = append(out, c)
		}
	}
	return out
}

// floors lists the floor contenders of a scenario.
func (f *figures) floors(s string) []string {
	var out []string
	for _, c := range f.a.ContendersIn(s) {
		if f.isFloor(c) {
			out = append(out, c)
		}
	}
	return out
}

// listFigures prints "a 210 us, b 180 us" for a figure.
func (f *figures) listFigures(s, variant, metric string, contenders []string) string {
	return quotedList(f.a.Quote(s, variant, metric, contenders))
}

// quotedList prints quoted figures as "a 210 us, b did not grant".
func quotedList(qs []analysis.Quoted) string {
	var parts []string
	for _, q := range qs {
		if q.Failed != "" {
			parts = append(parts, q.Contender+" "+q.Failed)
		} else {
			parts = append(parts, q.Contender+" "+results.Format(q.Row.Median, q.Row.Unit))
		}
	}
	return strings.Join(parts, ", ")
}

// rankingLine prints a ranking of the analysis (analysis.Run.RankFigure)
// from best to worst, figures inside each other's noise tied, failed
// ones last: its top (rankText) and how many it leaves out; "" for none.
func rankingLine(es []analysis.Entry) string {
	if len(es) == 0 {
		return ""
	}
	return rankText(topOf(es)) + more(es)
}

// more says how many ranked locks topOf left out of a reading; the
// section's table in details.md has them all.
func more(es []analysis.Entry) string {
	if n := len(es) - len(topOf(es)); n > 0 {
		return fmt.Sprintf(", and %d more", n)
	}
	return ""
}
