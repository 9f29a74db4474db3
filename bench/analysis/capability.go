package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// A Mark is a capability's verdict for one lock.
type Mark int

// Marks of a capability.
const (
	// NotMeasured: no evidence for the lock (not run, skipped).
	NotMeasured Mark = iota
	// Holds: the capability held in every repetition.
	Holds
	// Fails: it did not, in some repetition.
	Fails
	// NotComparable: the lock was measured only under another condition
	// than the one the capability is judged at (a smaller session count):
	// never a pass.
	NotComparable
	// NoEvidence: the trials never reached the situation the capability
	// tests (no second client was granted, so no stale write could
	// happen): no evidence either way, never a pass and never a failure.
	NoEvidence
)

// A Verdict is one lock's capability or ranking figure with its
// evidence.
type Verdict struct {
	Mark Mark
	// Short is the figure a table cell shows ("1.86 s", "5251", "no
	// fencing tokens", "never (> 5s)"); for NotComparable, the reason
	// ("not comparable: tested at 1,000 sessions").
	Short string
	// Figure is Short with the metric's label, for prose ("0 grants
	// while the servers were down").
	Figure string
	// Cell is the verdict as a capability matrix cell, saying what it
	// counts: "0 stale writes accepted", "no grant for 2.11 s", "19,734 of
	// 19,734 held", "never (> 5s)", "no fencing tokens".
	Cell string
	// Detail is the evidence in full: where, every repetition, the limit.
	Detail string
	// Entry is the figure as a ranking entry, with its condition.
	Entry Entry
	// Worst is how many repetitions Short is the worst of; 0 when Short
	// is no statistic ("no fencing tokens", "never (> 5s)").
	Worst int
}

// decl is one scenario's declaration of a decision figure.
type decl struct {
	scenario string
	results.DecisionFigure
}

// decls returns every declaration of a decision figure id, in the order
// of the run's scenarios.
func (run *Run) decls(id string) []decl {
	var out []decl
	for _, s := range run.r.Scenarios {
		for _, d := range s.Decides {
			if d.ID == id {
				out = append(out, decl{s.Name, d})
			}
		}
	}
	return out
}

// Declared reports whether any scenario of the run declares the figure
// id.
func (run *Run) Declared(id string) bool { return len(run.decls(id)) > 0 }

// CapabilityIDs lists the ids of the capabilities the run's scenarios
// declare (decision figures with a threshold) once each, in declaration
// order.
func (run *Run) CapabilityIDs() []string {
	var out []string
	for _, s := range run.r.Scenarios {
		for _, d := range s.Decides {
			if d.Op != "" && !slices.Contains(out, d.ID) {
				out = append(out, d.ID)
			}
		}
	}
	return out
}

// CapabilityIDsIn lists the capability ids one scenario declares, once
// each, in declaration order.
func (run *Run) CapabilityIDsIn(scenario string) []string {
	var out []string
	info, _ := run.r.Scenario(scenario)
	for _, d := range info.Decides {
		if d.Op != "" && !slices.Contains(out, d.ID) {
			out = append(out, d.ID)
		}
	}
	return out
}

// LabelIn is a capability's text as one scenario declares it.
func (run *Run) LabelIn(scenario, id string) string {
	info, _ := run.r.Scenario(scenario)
	for _, d := range info.Decides {
		if d.ID == id {
			return d.Text
		}
	}
	return id
}

// MatrixIDs are the capabilities of the capability matrix, C1 first:
// those the run measured (✓ or ✗) for some lock.
func (run *Run) MatrixIDs() []string {
	return slices.DeleteFunc(run.CapabilityIDs(), func(id string) bool { return !run.measuredAnywhere(id) })
}

// measuredAnywhere reports whether any lock has a ✓ or ✗ for a
// capability in this run.
func (run *Run) measuredAnywhere(id string) bool {
	for _, c := range run.locks {
		if m := run.Capability(c, id).Mark; m == Holds || m == Fails {
			return true
		}
	}
	return false
}

// Label is a capability's or figure's text as its first declaration
// gives it.
func (run *Run) Label(id string) string {
	if ds := run.decls(id); len(ds) > 0 {
		return ds[0].Text
	}
	return id
}

// Ref names a capability as the matrix does ("C4"), or by its label
// without its parenthesised definition when the matrix does not show it.
func (run *Run) Ref(id string) string {
	if i := run.matrixIndex(id); i >= 0 {
		return fmt.Sprintf("C%d", i+1)
	}
	return ShortLabel(run.Label(id))
}

// matrixIndex is a capability's place in the matrix, -1 when the matrix
// does not show it.
func (run *Run) matrixIndex(id string) int {
	m := run
	if run.matrix != nil {
		m = run.matrix
	}
	return slices.Index(m.MatrixIDs(), id)
}

// ShortLabel is a capability's text without its parenthesised
// definition, which the capability matrix's legend gives once.
func ShortLabel(text string) string {
	if i := strings.Index(text, " ("); i > 0 {
		return text[:i]
	}
	return text
}

// candidates returns the variants a declaration judges, hardest first:
// its Variant, or those matching Where, the one marked as the largest
// count first, then by size, largest first. A ranking figure compares
// one variant, the first any contender measured.
func (run *Run) candidates(d decl) []string {
	if d.Variant != "" {
		return []string{d.Variant}
	}
	if d.Where == nil {
		return nil
	}
	w := *d.Where
	var vs []string
	for _, v := range run.variants(d.scenario) {
		p := run.params(d.scenario, v)
		if (w.Load == "" || p.Load == w.Load) && (w.Lease == "" || p.Lease == w.Lease) &&
			(w.Fault == "" || p.Fault == w.Fault) && (!w.Contended || p.Contended) {
			vs = append(vs, v)
		}
	}
	slices.SortStableFunc(vs, func(a, b string) int {
		pa, pb := run.params(d.scenario, a), run.params(d.scenario, b)
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
	// A lock measured only on a small shared key set is not ranked among
	// figures of many workers on distinct keys.
	for _, v := range vs {
		if run.measures(d.scenario, v, d.Metric) {
			return []string{v}
		}
	}
	return nil
}

// reference is the condition a capability's declaration is judged at:
// its hardest candidate variant that any lock measured (has the figure,
// a failure or a void trial).
func (run *Run) reference(d decl) (string, bool) {
	for _, v := range run.candidates(d) {
		for _, c := range run.locks {
			if j := run.judgeAt(c, d, v); j.Mark != NotMeasured {
				return v, true
			}
		}
	}
	return "", false
}

// GuardHit returns the label and evidence of the first guard above zero
// in any repetition, or "".
func (run *Run) GuardHit(scenario, contender, variant string, guards []results.ClaimGuard) (string, string) {
	for _, g := range guards {
		vals, _ := run.values(scenario, contender, variant, g.Metric)
		if len(vals) > 0 && slices.Max(vals) > 0 {
			label := cmp.Or(g.Label, g.Metric)
			nums := make([]string, len(vals))
			for i, v := range vals {
				nums[i] = results.Num(v)
			}
			return label, fmt.Sprintf("%s: %s per repetition (n=%d)", label, strings.Join(nums, ", "), len(vals))
		}
	}
	return "", ""
}

// Figure judges a ranking figure (or a capability's figure) for one
// contender at the first of its declarations where the contender has the
// figure or a failure, so that each deployment is ranked by its own
// variant (a standby pair by its primary's loss, a single server by its
// restart); the entry's condition says which, and a ranking compares
// only entries whose conditions match.
func (run *Run) Figure(c, id string) Verdict {
	var j Verdict
	for _, d := range run.decls(id) {
		if j = run.judge(c, d); len(j.Entry.Values) > 0 || j.Entry.Failed != "" {
			return j
		}
	}
	return j
}

// judge judges one declaration for one contender. A capability is judged
// at its reference condition (see reference); a contender measured only
// at an easier candidate (fewer sessions) fails there if it fails (what
// fails at the easier condition fails at the harder) and is otherwise
// NotComparable, never a pass. A ranking figure has one candidate.
func (run *Run) judge(c string, d decl) Verdict {
	ref, ok := run.reference(d)
	if !ok {
		return run.notMeasured(c, d)
	}
	if j := run.judgeAt(c, d, ref); j.Mark != NotMeasured || d.Op == "" {
		return j
	}
	refCond := run.conditionOf(d.scenario, ref, 0)
	for _, v := range run.candidates(d) {
		if v == ref {
			continue
		}
		j := run.judgeAt(c, d, v)
		switch j.Mark {
		case NotMeasured:
			continue
		case NoEvidence:
			return j
		case Fails:
			why := j.Entry.Condition.Differs(refCond)
			j.Short += " (" + strings.TrimPrefix(why, "tested ") + ")"
			j.Figure += " (" + strings.TrimPrefix(why, "tested ") + ")"
			j.Cell += " (" + strings.TrimPrefix(why, "tested ") + ")"
			return j
		}
		why := "not comparable: " + j.Entry.Condition.Differs(refCond)
		return Verdict{Mark: NotComparable, Short: why, Figure: why, Cell: why,
			Detail: j.Detail + "; the others are judged in " + ref, Entry: j.Entry}
	}
	return run.notMeasured(c, d)
}

// notMeasured is the verdict of a contender without evidence for d: why
// it was skipped, when its record says.
func (run *Run) notMeasured(c string, d decl) Verdict {
	for _, v := range run.candidates(d) {
		if why := run.skipped(d.scenario, c, v); why != "" {
			return Verdict{Mark: NotMeasured, Detail: fmt.Sprintf("%s %s: %s", run.Title(d.scenario), v, why)}
		}
	}
	return Verdict{Mark: NotMeasured, Detail: "not measured in this run"}
}

// judgeAt judges one declaration for one contender at variant v.
func (run *Run) judgeAt(c string, d decl, v string) Verdict {
	where := fmt.Sprintf("%s %s", run.Title(d.scenario), v)
	vals, unit := run.values(d.scenario, c, v, d.Metric)
	cond := run.conditionOf(d.scenario, v, len(vals))
	if label, ev := run.GuardHit(d.scenario, c, v, d.Void); label != "" {
		why := "no evidence: " + label
		return Verdict{Mark: NoEvidence, Short: why, Figure: why, Cell: why, Detail: where + ": " + ev + " — the trial never reached the fault it tests, so its zero says nothing either way",
			Entry: Entry{Contender: c, Failed: label, Condition: cond}}
	}
	if label, ev := run.GuardHit(d.scenario, c, v, d.Fail); label != "" {
		failed := run.NeverText(d.scenario, c, v)
		return Verdict{Mark: Fails, Short: failed, Figure: failed, Cell: failed, Detail: where + ": " + ev, Entry: Entry{Contender: c, Values: vals, Unit: unit, Failed: failed, Condition: cond}}
	}
	if w := d.Without; len(vals) == 0 && w != nil {
		if other, _ := run.values(d.scenario, c, v, w.Metric); len(other) > 0 {
			return Verdict{Mark: Fails, Short: w.Label, Figure: w.Label, Cell: w.Label, Detail: where + ": " + w.Label + " (no " + d.Metric + " figure; " + w.Metric + " measured)", Entry: Entry{Contender: c, Failed: w.Label, Condition: cond}}
		}
	}
	if len(vals) == 0 {
		return Verdict{Mark: NotMeasured}
	}
	j := Verdict{Entry: Entry{Contender: c, Values: vals, Unit: unit, Condition: cond}}
	j.Detail = fmt.Sprintf("%s: %s", where, results.Span(vals, unit))
	j.Short = results.Format(Median(vals), unit)
	if d.Op == "" {
		j.Mark = Holds // a ranking figure: measured
		return j
	}
	worst, bound, ok := run.bound(c, d, v, vals, unit)
	if !ok {
		j.Mark, j.Detail = NotMeasured, j.Detail+"; no bound to judge it by"
		return j
	}
	j.Short = results.Format(worst, unit)
	j.Figure, j.Worst = j.Short, len(vals)
	j.Cell = cellText(d, worst, bound, unit)
	if of, _ := run.values(d.scenario, c, v, d.Of); len(of) > 0 {
		j.Cell = fmt.Sprintf("%s of %s %s: %s", j.Short, results.Num(slices.Max(of)), run.metricLabel(d.scenario, d.Of), d.Counts)
	}
	info, _ := run.r.Scenario(d.scenario)
	if m, ok := info.Metric(d.Metric); ok && m.Label != "" {
		j.Figure += " " + m.Label
	}
	j.Detail += fmt.Sprintf("; worst repetition %s, limit %s", results.Format(worst, unit), results.Format(bound, unit))
	pass := worst <= bound
	if d.Op == results.AtLeast {
		pass = worst >= bound
	}
	j.Mark = map[bool]Mark{true: Holds, false: Fails}[pass]
	return j
}

// cellText says a capability's worst repetition as a matrix cell, with
// what it counts (DecisionFigure.Counts): a duration after the words ("no
// grant for 2.11 s"), a count before them ("0 stale writes accepted"), a
// count judged against another figure with that figure ("19,734 of
// 19,734 held"). A count out of trials (DecisionFigure.Of) is said by
// judgeAt, which has the trials: "2 of 2 trials: a second holder ...".
func cellText(d decl, worst, bound float64, unit string) string {
	figure := results.Format(worst, unit)
	switch {
	case d.Counts == "":
		return figure
	case nanoseconds[unit] > 0:
		return d.Counts + " " + figure
	case d.Than.Metric != "":
		return figure + " of " + results.Format(bound, unit) + " " + d.Counts
	}
	return figure + " " + d.Counts
}

// nanoseconds converts a duration unit to nanoseconds.
var nanoseconds = map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}

// bound returns the worst repetition of a capability's figure (max for
// AtMost, min for AtLeast; against another figure, the repetition
// furthest on the wrong side of its own) and its limit in the figure's
// unit.
func (run *Run) bound(c string, d decl, v string, vals []float64, unit string) (worst, limit float64, ok bool) {
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
		// Each repetition against its own bound: the sessions a
		// repetition held, against the sessions it opened, which can
		// differ between repetitions by a descriptor or two (19,733 held
		// of 19,733 opened is every session, not one short of another
		// repetition's 19,734).
		got, than := run.pairedValues(d.scenario, c, v, d.Metric, d.Than.Metric)
		if len(than) == 0 {
			return 0, 0, false
		}
		i := 0
		for j := range got {
			margin, least := got[j]-factor*than[j], got[i]-factor*than[i]
			if (d.Op == results.AtLeast && margin < least) || (d.Op != results.AtLeast && margin > least) {
				i = j
			}
		}
		return got[i], factor * than[i], true
	case d.Than.Parameter != "":
		lease, ok := run.Duration(c, d.Than.Parameter)
		per, known := nanoseconds[unit]
		if !ok || !known {
			return 0, 0, false
		}
		return worst, factor * float64(lease.Nanoseconds()) / per, true
	}
	return worst, factor * d.Than.Value, true
}

// NeverText says a failed trial's figure as what it is: "never (> 3 s)",
// the waiter's bound at the contender's lease, when the variant records
// one.
func (run *Run) NeverText(scenario, c, v string) string {
	p := run.params(scenario, v)
	if p.GrantBound == nil {
		return "never (failed trials)"
	}
	lease, ok := run.Duration(c, "lease")
	if !ok {
		return "never (failed trials)"
	}
	return fmt.Sprintf("never (> %s)", p.GrantBound.At(lease))
}

// Capability judges a capability for a contender over every declaration
// of its id: with CombineAll any ✗ is ✗ and ✓ needs one ✓; with
// CombineAny any ✓ is ✓. With CombineAll, a declaration whose trials
// never reached their fault (NoEvidence) also keeps a ✓ elsewhere from
// standing for the whole: a safety property is not shown to hold on
// part of its evidence. NotComparable is shown only where no
// declaration gave a ✓ or ✗.
func (run *Run) Capability(c, id string) Verdict { return run.combine(c, run.decls(id)) }

// CapabilityIn judges a capability for a contender over the declarations
// of one scenario only, as Capability does over all.
func (run *Run) CapabilityIn(c, scenario, id string) Verdict {
	var ds []decl
	for _, d := range run.decls(id) {
		if d.scenario == scenario {
			ds = append(ds, d)
		}
	}
	return run.combine(c, ds)
}

// combine judges a contender over declarations of one capability (see
// Capability).
func (run *Run) combine(c string, ds []decl) Verdict {
	out := Verdict{Mark: NotMeasured}
	var details []string
	for _, d := range ds {
		j := run.judge(c, d)
		if j.Mark != NotMeasured || len(details) == 0 {
			details = append(details, j.Detail)
		}
		switch {
		case d.Combine == results.CombineAny && j.Mark == Holds,
			d.Combine == results.CombineAny && j.Mark == Fails && out.Mark != Holds && out.Mark != Fails,
			d.Combine != results.CombineAny && j.Mark == Fails && out.Mark != Fails,
			d.Combine != results.CombineAny && j.Mark == Holds && (out.Mark == NotMeasured || out.Mark == NotComparable),
			d.Combine != results.CombineAny && j.Mark == NoEvidence && out.Mark != Fails && out.Mark != NoEvidence,
			(j.Mark == NotComparable || j.Mark == NoEvidence) && out.Mark == NotMeasured:
			out.Mark, out.Short, out.Figure, out.Cell, out.Entry, out.Worst = j.Mark, j.Short, cmp.Or(j.Figure, j.Short), cmp.Or(j.Cell, j.Short), j.Entry, j.Worst
		}
	}
	out.Detail = strings.Join(details, " | ")
	return out
}
