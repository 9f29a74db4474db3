package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// decl is one scenario's declaration of a decision figure.
type decl struct {
	scenario string
	results.DecisionFigure
}

// decls returns every declaration of a decision figure id, in the order
// of the run's scenarios.
func (f *figures) decls(id string) []decl {
	var out []decl
	for _, s := range f.r.Scenarios {
		for _, d := range s.Decides {
			if d.ID == id {
				out = append(out, decl{s.Name, d})
			}
		}
	}
	return out
}

// capabilityIDs lists the ids of the capabilities the run's scenarios
// declare (decision figures with a threshold) once each, in declaration
// order.
func (f *figures) capabilityIDs() []string {
	var out []string
	for _, s := range f.r.Scenarios {
		for _, d := range s.Decides {
			if d.Op != "" && !slices.Contains(out, d.ID) {
				out = append(out, d.ID)
			}
		}
	}
	return out
}

// Marks of a capability cell.
const (
	markYes  = "✓"
	markNo   = "✗"
	markNone = "–"
)

// judged is one contender's decision figure: its mark (capabilities), the
// values ranked (figures), a short text for a table cell and the evidence
// in full.
type judged struct {
	mark  string
	short string
	title string
	entry entry
	// figure is short with the metric's label, for prose ("0 grants
	// while the servers were down").
	figure string
}

func (j judged) cell() cell {
	class := map[string]string{markYes: string(Holds), markNo: string(Fails), markNone: string(Inconclusive)}[j.mark]
	text := j.mark
	if j.short != "" {
		text += " " + j.short
	}
	return cell{text: text, class: class, title: j.title}
}

// candidates returns the variants a declaration judges, in order of
// preference: its Variant, or those matching Where, the one marked as the
// largest count first, then by size, largest first; a capability may be
// shown at the next variant where a contender lacks the first, a ranking
// figure only at the first.
func (f *figures) candidates(d decl) []string {
	if d.Variant != "" {
		return []string{d.Variant}
	}
	if d.Where == nil {
		return nil
	}
	w := *d.Where
	vs := f.variantsWhere(d.scenario, func(p results.VariantParams) bool {
		return (w.Load == "" || p.Load == w.Load) && (w.Lease == "" || p.Lease == w.Lease) &&
			(w.Fault == "" || p.Fault == w.Fault) && (!w.Contended || p.Contended)
	})
	slices.SortStableFunc(vs, func(a, b string) int {
		pa, pb := f.params(d.scenario, a), f.params(d.scenario, b)
		if pa.SessionsMax != pb.SessionsMax {
			if pa.SessionsMax {
				return -1
			}
			return 1
		}
		return cmp.Compare(pb.Size(), pa.Size())
	})
	if d.Op != "" {
		return vs
	}
	// A ranking compares one variant, the first any contender measured:
	// a lock measured only on a small shared key set is not ranked among
	// figures of many workers on distinct keys.
	for _, v := range vs {
		if f.measures(d.scenario, v, d.Metric) {
			return []string{v}
		}
	}
	return nil
}

// measures reports whether any contender has a figure of metric in a
// variant of scenario.
func (f *figures) measures(scenario, variant, metric string) bool {
	for _, x := range f.r.Summary {
		if x.Scenario == scenario && x.Variant == variant && x.Metric == metric {
			return true
		}
	}
	return false
}

// values returns a figure of one contender and variant, one value per
// repetition.
func (f *figures) values(scenario, contender, variant, metric string) ([]float64, string) {
	var vals []float64
	unit := ""
	for _, x := range f.raws(scenario, contender, variant) {
		if m, ok := metricNamed(x, metric); ok {
			vals, unit = append(vals, m.Value), m.Unit
		}
	}
	return vals, unit
}

// guardHit returns the label and figure of the first guard above zero in
// any repetition, or "".
func (f *figures) guardHit(scenario, contender, variant string, guards []results.ClaimGuard) (string, string) {
	for _, g := range guards {
		vals, _ := f.values(scenario, contender, variant, g.Metric)
		if len(vals) > 0 && slices.Max(vals) > 0 {
			label := cmp.Or(g.Label, g.Metric)
			return label, fmt.Sprintf("%s: %s per repetition (n=%d)", label, strings.Join(slicesMap(vals, results.Num), ", "), len(vals))
		}
	}
	return "", ""
}

// judgeDecl judges one declaration for one contender at the first of its
// candidate variants where the contender has the figure or a failure.
func (f *figures) judgeDecl(c string, d decl) judged {
	skipped := ""
	for _, v := range f.candidates(d) {
		where := fmt.Sprintf("%s %s", f.title(d.scenario), v)
		if label, ev := f.guardHit(d.scenario, c, v, d.Void); label != "" {
			return judged{mark: markNo, short: label, title: where + ": " + ev + " — the trial never reached the fault it tests, so its zero says nothing good",
				entry: entry{contender: c, failed: label}}
		}
		vals, unit := f.values(d.scenario, c, v, d.Metric)
		if label, ev := f.guardHit(d.scenario, c, v, d.Fail); label != "" {
			failed := f.neverText(d.scenario, c, v)
			return judged{mark: markNo, short: failed, title: where + ": " + ev, entry: entry{contender: c, vals: vals, unit: unit, failed: failed}}
		}
		if w := d.Without; len(vals) == 0 && w != nil {
			if other, _ := f.values(d.scenario, c, v, w.Metric); len(other) > 0 {
				return judged{mark: markNo, short: w.Label, title: where + ": " + w.Label + " (no " + d.Metric + " figure; " + w.Metric + " measured)", entry: entry{contender: c, failed: w.Label}}
			}
		}
		if len(vals) == 0 {
			if why := f.notMeasured(d.scenario, v); skipped == "" {
				for _, w := range why {
					if strings.HasPrefix(w, c+": ") {
						skipped = where + ": " + strings.TrimPrefix(w, c+": ")
					}
				}
			}
			continue
		}
		j := judged{entry: entry{contender: c, vals: vals, unit: unit}}
		s := spanOf(vals)
		j.title = fmt.Sprintf("%s: %s", where, s.in(unit))
		j.short = results.Format(s.median, unit)
		if d.Op == "" {
			return j
		}
		worst, bound, ok := f.capabilityBound(c, d, v, vals, unit)
		if !ok {
			j.mark, j.title = markNone, j.title+"; no bound to judge it by"
			return j
		}
		j.short = results.Format(worst, unit)
		j.figure = j.short
		info, _ := f.r.Scenario(d.scenario)
		if m, ok := info.Metric(d.Metric); ok && m.Label != "" {
			j.figure += " " + m.Label
		}
		j.title += fmt.Sprintf("; worst repetition %s, limit %s", results.Format(worst, unit), results.Format(bound, unit))
		pass := worst <= bound
		if d.Op == results.AtLeast {
			pass = worst >= bound
		}
		j.mark = map[bool]string{true: markYes, false: markNo}[pass]
		return j
	}
	return judged{mark: markNone, title: cmp.Or(skipped, "not measured in this run")}
}

// capabilityBound returns the worst repetition of a capability's figure
// (max for AtMost, min for AtLeast) and its limit in the figure's unit.
func (f *figures) capabilityBound(c string, d decl, v string, vals []float64, unit string) (worst, bound float64, ok bool) {
	worst = slices.Max(vals)
	if d.Op == results.AtLeast {
		worst = slices.Min(vals)
	}
	factor := d.Than.Factor
	if factor == 0 {
		factor = 1
	}
	switch {
	case d.Than.Metric != "":
		other, _ := f.values(d.scenario, c, v, d.Than.Metric)
		if len(other) == 0 {
			return 0, 0, false
		}
		return worst, factor * slices.Max(other), true
	case d.Than.Parameter != "":
		lease, ok := f.duration(c, d.Than.Parameter)
		per, known := nanoseconds[unit]
		if !ok || !known {
			return 0, 0, false
		}
		return worst, factor * float64(lease.Nanoseconds()) / per, true
	}
	return worst, factor * d.Than.Value, true
}

// neverText says a failed trial's figure as what it is: "never (> 3 s)",
// the waiter's bound at the contender's lease, when the variant records
// one.
func (f *figures) neverText(scenario, c, v string) string {
	p := f.params(scenario, v)
	if p.GrantBound == nil {
		return "never (failed trials)"
	}
	lease, ok := f.duration(c, "lease")
	if !ok {
		return "never (failed trials)"
	}
	return fmt.Sprintf("never (> %s)", p.GrantBound.At(lease))
}

// capability judges a capability for a contender over every declaration
// of its id: with CombineAll any ✗ is ✗ and ✓ needs one ✓; with
// CombineAny any ✓ is ✓.
func (f *figures) capability(c, id string) judged { return f.combined(c, f.decls(id)) }

// combined judges a contender over declarations of one capability (see
// capability).
func (f *figures) combined(c string, ds []decl) judged {
	var out judged
	out.mark = markNone
	var titles []string
	for _, d := range ds {
		j := f.judgeDecl(c, d)
		if j.mark != markNone || len(titles) == 0 {
			titles = append(titles, j.title)
		}
		switch {
		case d.Combine == results.CombineAny && j.mark == markYes,
			d.Combine == results.CombineAny && j.mark == markNo && out.mark == markNone,
			d.Combine != results.CombineAny && j.mark == markNo && out.mark != markNo,
			d.Combine != results.CombineAny && j.mark == markYes && out.mark == markNone:
			out.mark, out.short, out.figure = j.mark, j.short, cmp.Or(j.figure, j.short)
		}
	}
	out.title = strings.Join(titles, " | ")
	return out
}

// capabilityLabel is the capability's text as its first declaration
// gives it.
func (f *figures) capabilityLabel(id string) string {
	if ds := f.decls(id); len(ds) > 0 {
		return ds[0].Text
	}
	return id
}

// capabilityMatrix writes a row per lock and a column per capability,
// each cell ✓, ✗ or – (not measured) with its figure, the evidence in
// the cell's title.
func (f *figures) capabilityMatrix(d *document) {
	ids := f.matrixIDs()
	if len(ids) == 0 {
		return
	}
	var locks []string
	for _, c := range f.contenders {
		if !f.isFloor(c) {
			locks = append(locks, c)
		}
	}
	t := table{head: []string{"lock"}}
	var legend []string
	for i, id := range ids {
		t.head = append(t.head, fmt.Sprintf("C%d", i+1))
		legend = append(legend, fmt.Sprintf("C%d: %s", i+1, f.capabilityLabel(id)))
	}
	for _, c := range locks {
		row := []cell{{text: c}}
		measured := false
		for _, id := range ids {
			j := f.capability(c, id)
			measured = measured || j.mark != markNone
			row = append(row, j.cell())
		}
		if measured {
			t.rows = append(t.rows, row)
		}
	}
	if len(t.rows) == 0 {
		return
	}
	d.h3("What each lock did in this run")
	d.p("✓ the capability held in every repetition (the worst is shown), ✗ it did not (“did not grant”: the trial never reached the fault it tests; “never”: the waiter never got the lock within its bound), – not measured. Each cell's figure and n are in its title (hover in report.html) and in the sections below.")
	d.add(list{items: legend})
	d.add(t)
}

// matrixIDs are the capabilities of the matrix, C1 first: those the run
// measured for some lock.
func (f *figures) matrixIDs() []string {
	return slices.DeleteFunc(f.capabilityIDs(), func(id string) bool { return !f.measuredAnywhere(id) })
}

// capabilityRef names a capability as the matrix does ("C4"), or by its
// label when the matrix does not show it.
func (f *figures) capabilityRef(id string) string {
	if i := slices.Index(f.matrixIDs(), id); i >= 0 {
		return fmt.Sprintf("C%d", i+1)
	}
	return shortLabel(f.capabilityLabel(id))
}

// measuredAnywhere reports whether any lock has a ✓ or ✗ for a
// capability in this run.
func (f *figures) measuredAnywhere(id string) bool {
	for _, c := range f.contenders {
		if !f.isFloor(c) && f.capability(c, id).mark != markNone {
			return true
		}
	}
	return false
}
