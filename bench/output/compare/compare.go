// Package compare compares two benchmark runs figure by figure, the way
// benchstat compares benchmark results: the median of the per-repetition
// values with a confidence interval, and a Mann–Whitney U test for whether
// the difference is significant (golang.org/x/perf/benchmath does the
// statistics). Each side may be several runs pooled (Pool), so that
// builds run in turns cancel the machine's drift; with hundreds of
// figures, some differ at p < α by chance, so the comparison also counts
// what survives the Benjamini–Hochberg procedure (over Welch's t-test on
// the logarithms, see Figure.PShift). Beside the figures it says whether
// the runs, each judged on its own, reach the same decision verdicts
// (analysis.Agree): per use case's pick and per capability cell, the
// flips with both figures. It backs
// `monolock-bench compare A/results.json B/results.json`.
package compare

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/output/report"
	"github.com/monolock/monolock-bench/bench/results"
)

// DefaultAlpha is the significance level Compare uses when given zero.
const DefaultAlpha = 0.05

// confidence of the intervals around the medians.
const confidence = 0.95

// minShiftN is the fewest values a side needs for PShift: the rank
// test's own minimum at alpha 0.05 (benchmath warns below it).
const minShiftN = 4

// Figure is one figure present in both runs.
type Figure struct {
	// Metric is the figure's name in results.json and Unit its stored
	// unit; Label is what its scenario declares a reader sees (the name
	// when neither run declares it).
	Scenario, Variant, Contender, Metric, Unit, Label string
	// Old and New summarise the per-repetition values: median and its
	// confidence interval.
	Old, New benchmath.Summary
	OldN     int
	NewN     int
	// P is the Mann–Whitney U p-value; the change is significant when
	// P < Alpha.
	P, Alpha float64
	// PShift is the p-value of Welch's t-test on the logarithms of the
	// values (on the values themselves where one is not positive), for
	// the correction over all figures: a rank test's p-value cannot fall
	// below 2/C(n1+n2, n1) (0.0022 at 6 and 6 runs), which no correction
	// over hundreds of figures lets through, so that even a sixfold change
	// would go unfound; this one has no such floor.
	PShift float64
	// Delta is "~" when not significant, else the change of the medians
	// in percent ("+12.34%").
	Delta string
	// Direction is "better", "worse" or "" (no change, or a figure without
	// a better direction).
	Direction string
	// Warnings come from the statistics, e.g. too few repetitions for any
	// difference to be significant.
	Warnings []string
}

// Comparison is the result of comparing an old and a new run.
type Comparison struct {
	OldRun, NewRun string
	Figures        []Figure
	// OnlyOld and OnlyNew name figures present in one run only
	// ("scenario/variant/contender label").
	OnlyOld, OnlyNew []string
	// Caveats say where the runs are not like for like (machine, backend,
	// parameters, partial runs).
	Caveats []string
	// Claims are the claims checked in both runs, in report order.
	Claims []ClaimChange
	// Discoveries are the figures (indexes into Figures) whose change
	// survives the Benjamini–Hochberg procedure over their PShift at a
	// false discovery rate of Alpha over all the figures compared.
	Discoveries []int
	// Verdicts are the decision's verdicts of every run, each judged on
	// its own (not pooled), the old runs first.
	Verdicts analysis.Agreement
}

// ClaimChange is one claim's verdict in the old and the new run.
type ClaimChange struct {
	ID       string
	Claim    string
	Old, New analysis.ClaimVerdict
	// OldEvidence and NewEvidence are the numbers behind each verdict.
	OldEvidence, NewEvidence string
}

type key struct{ scenario, variant, contender, metric string }

// samples collects the per-repetition values of every figure of r, keys in
// order of first appearance.
func samples(r *results.Results) ([]key, map[key][]float64, map[key]string) {
	var order []key
	vals := map[key][]float64{}
	units := map[key]string{}
	for _, raw := range r.Raw {
		for _, m := range raw.Metrics {
			k := key{raw.Scenario, raw.Variant, raw.Contender, m.Name}
			if _, ok := vals[k]; !ok {
				order = append(order, k)
				units[k] = m.Unit
			}
			vals[k] = append(vals[k], m.Value)
		}
	}
	return order, vals, units
}

// spec returns a figure's declaration: its scenario's in the new run,
// else in the old (a file without declarations: FillDefaults gives it
// today's).
func spec(old, new *results.Results, k key) (results.MetricSpec, bool) {
	for _, r := range []*results.Results{new, old} {
		if s, ok := r.Scenario(k.scenario); ok {
			if m, ok := s.Metric(k.metric); ok {
				return m, true
			}
		}
	}
	return results.MetricSpec{}, false
}

// label returns a figure's declared label, else its name.
func label(old, new *results.Results, k key) string {
	if m, ok := spec(old, new, k); ok && m.Label != "" {
		return m.Label
	}
	return k.metric
}

// name names a figure for a reader: "scenario/variant/contender label".
func name(old, new *results.Results, k key) string {
	return k.scenario + "/" + k.variant + "/" + k.contender + " " + label(old, new, k)
}

// better returns the direction in which a figure improves: its
// declaration's, else its summary row's Better.
func better(old, new *results.Results, k key) string {
	if m, ok := spec(old, new, k); ok {
		return m.Better
	}
	return betterOf([]*results.Results{new, old}, results.Row{Scenario: k.scenario, Variant: k.variant, Contender: k.contender, Metric: k.metric})
}

// Compare compares every figure of the old runs and the new, each side
// pooled (Pool). alpha is the significance level (DefaultAlpha when
// zero). It does not modify its arguments.
func Compare(oldRuns, newRuns []*results.Results, alpha float64) *Comparison {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	th := benchmath.DefaultThresholds
	th.CompareAlpha = alpha
	old, new := Pool(oldRuns), Pool(newRuns)
	c := &Comparison{OldRun: old.RunID, NewRun: new.RunID, Caveats: append(caveats(old, new), sideCaveats(oldRuns, newRuns)...)}
	c.Claims = claimChanges(analysis.New(old).Claims(), analysis.New(new).Claims())
	var each []*analysis.Run
	for _, r := range slices.Concat(oldRuns, newRuns) {
		each = append(each, analysis.New(r))
	}
	c.Verdicts = analysis.Agree(each)
	oldOrder, oldVals, units := samples(old)
	newOrder, newVals, _ := samples(new)
	for _, k := range oldOrder {
		nv, ok := newVals[k]
		if !ok {
			c.OnlyOld = append(c.OnlyOld, name(old, new, k))
			continue
		}
		s1 := benchmath.NewSample(slices.Clone(oldVals[k]), &th)
		s2 := benchmath.NewSample(slices.Clone(nv), &th)
		cmp := benchmath.AssumeNothing.Compare(s1, s2)
		f := Figure{
			Scenario: k.scenario, Variant: k.variant, Contender: k.contender, Metric: k.metric, Unit: units[k], Label: label(old, new, k),
			Old: benchmath.AssumeNothing.Summary(s1, confidence), New: benchmath.AssumeNothing.Summary(s2, confidence),
			OldN: len(s1.Values), NewN: len(s2.Values), P: cmp.P, Alpha: alpha,
			PShift: shiftP(oldVals[k], nv, &th),
		}
		f.Delta = cmp.FormatDelta(f.Old.Center, f.New.Center)
		if dir := better(old, new, k); f.Delta != "~" && f.Old.Center != f.New.Center && dir != "" {
			up := f.New.Center > f.Old.Center
			if up == (dir == results.BetterHigher) {
				f.Direction = "better"
			} else {
				f.Direction = "worse"
			}
		}
		for _, w := range slices.Concat(f.Old.Warnings, f.New.Warnings, cmp.Warnings) {
			if !slices.Contains(f.Warnings, w.Error()) {
				f.Warnings = append(f.Warnings, w.Error())
			}
		}
		c.Figures = append(c.Figures, f)
	}
	for _, k := range newOrder {
		if _, ok := oldVals[k]; !ok {
			c.OnlyNew = append(c.OnlyNew, name(old, new, k))
		}
	}
	c.Discoveries = discoveries(c.Figures, alpha)
	return c
}

// shiftP is the p-value of Welch's t-test on the logarithms of old and
// new (a ratio is what a benchmark changes), on the values themselves
// when one is not positive; 1 with fewer than minShiftN values a side,
// whose variance says too little.
func shiftP(old, new []float64, th *benchmath.Thresholds) float64 {
	if len(old) < minShiftN || len(new) < minShiftN {
		return 1
	}
	x, y := slices.Clone(old), slices.Clone(new)
	if slices.Min(x) > 0 && slices.Min(y) > 0 {
		for i := range x {
			x[i] = math.Log(x[i])
		}
		for i := range y {
			y[i] = math.Log(y[i])
		}
	}
	p := benchmath.AssumeNormal.Compare(benchmath.NewSample(x, th), benchmath.NewSample(y, th)).P
	if math.IsNaN(p) {
		return 1
	}
	return p
}

// discoveries returns the figures whose change survives the
// Benjamini–Hochberg procedure at false discovery rate q over their
// PShift: with the p-values in ascending order, the first k, k the
// largest rank whose p-value is at most k·q/m over m figures. Among
// hundreds of figures, some differ at p < q by chance alone; these are
// the changes that do not.
func discoveries(figs []Figure, q float64) []int {
	order := make([]int, len(figs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(figs[a].PShift, figs[b].PShift) })
	m := float64(len(figs))
	k := 0
	for rank, i := range order {
		if figs[i].PShift <= float64(rank+1)*q/m {
			k = rank + 1
		}
	}
	out := slices.Clone(order[:k])
	slices.Sort(out)
	return out
}

// Tally counts the figures that differ at p < alpha: all, better and
// worse.
func (c *Comparison) Tally() (significant, better, worse int) {
	for _, f := range c.Figures {
		if f.Delta == "~" {
			continue
		}
		significant++
		switch f.Direction {
		case "better":
			better++
		case "worse":
			worse++
		}
	}
	return significant, better, worse
}

// claimChanges pairs the claims of two runs by id: the old run's in its
// order, then those only the new run checks. A claim one run does not
// check has an empty verdict there.
func claimChanges(old, new []analysis.Claim) []ClaimChange {
	var out []ClaimChange
	for _, oc := range old {
		ch := ClaimChange{ID: oc.ID, Claim: oc.Claim, Old: oc.Verdict, OldEvidence: oc.Evidence}
		for _, nc := range new {
			if nc.ID == oc.ID {
				ch.New, ch.NewEvidence = nc.Verdict, nc.Evidence
			}
		}
		out = append(out, ch)
	}
	for _, nc := range new {
		if !slices.ContainsFunc(old, func(oc analysis.Claim) bool { return oc.ID == nc.ID }) {
			out = append(out, ClaimChange{ID: nc.ID, Claim: nc.Claim, New: nc.Verdict, NewEvidence: nc.Evidence})
		}
	}
	return out
}

// sessionNetwork matches the name of the Docker network a containers run
// creates for itself (a random id per run): two runs on the same kind of
// path differ in it, which is no difference.
var sessionNetwork = regexp.MustCompile(`monolock-bench-[0-9a-f]{12}`)

// caveats lists the differences that make two runs less than like for
// like.
func caveats(a, b *results.Results) []string {
	var out []string
	diff := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s differs: %q → %q", what, x, y))
		}
	}
	ea, eb := a.Environment, b.Environment
	diff("CPU", ea.CPUModel, eb.CPUModel)
	diff("cores", fmt.Sprint(ea.Cores), fmt.Sprint(eb.Cores))
	diff("backend", ea.Backend, eb.Backend)
	diff("network path", sessionNetwork.ReplaceAllString(ea.NetworkPath, "monolock-bench-…"), sessionNetwork.ReplaceAllString(eb.NetworkPath, "monolock-bench-…"))
	diff("kernel", ea.Kernel, eb.Kernel)
	diff("Go", ea.GoVersion, eb.GoVersion)
	versions := func(e results.Environment) map[string]string {
		m := map[string]string{}
		for _, s := range e.Servers {
			m[s.Role] = s.Version
		}
		return m
	}
	va, vb := versions(ea), versions(eb)
	for _, role := range slices.Sorted(maps.Keys(va)) {
		if y, ok := vb[role]; ok {
			diff("server "+role+" version", va[role], y)
		}
	}
	diff("quick mode", fmt.Sprint(a.Parameters.Quick), fmt.Sprint(b.Parameters.Quick))
	for _, group := range []struct {
		name string
		x, y map[string]results.Settings
	}{
		{"scenario", a.Parameters.Scenario, b.Parameters.Scenario},
		{"contender", a.Parameters.Contender, b.Parameters.Contender},
	} {
		var names []string
		for n := range group.x {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			y, ok := group.y[n]
			if !ok {
				continue
			}
			x := group.x[n]
			var keys []string
			for k := range x {
				keys = append(keys, k)
			}
			for k := range y {
				if _, ok := x[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				diff(fmt.Sprintf("%s %s setting %s", group.name, n, k), x[k], y[k])
			}
		}
	}
	for _, r := range []*results.Results{a, b} {
		if r.Partial {
			out = append(out, fmt.Sprintf("run %s is partial: %s", r.RunID, r.PartialReason))
		}
	}
	return out
}

// Markdown writes the comparison as Markdown, through the report's
// document model (report.Page): caveats, one table row per figure (its
// declared label, old and new median ± the confidence interval as a
// percentage in the unit that suits their magnitude, the change or "~",
// p-value and sample sizes), the verdict of each claim in both runs, then
// figures found in one run only and the statistics' warnings.
func (c *Comparison) Markdown(w io.Writer) error {
	p := report.NewPage("compare " + c.OldRun + " → " + c.NewRun)
	if len(c.Caveats) > 0 {
		p.Paragraph("Not like for like:", true)
		p.List(c.Caveats)
	}
	alpha := DefaultAlpha
	if len(c.Figures) > 0 {
		alpha = c.Figures[0].Alpha
	}
	p.Paragraph(fmt.Sprintf("Medians of the per-repetition values ± the %.0f%% confidence interval; delta is the change of the medians when a Mann–Whitney U test finds it significant (p below %v), else ~.", 100*confidence, alpha), false)
	if len(c.Figures) > 0 {
		p.Paragraph(c.tallyText(alpha), false)
	}
	var rows [][]string
	var warnings []string
	for _, f := range c.Figures {
		delta := f.Delta
		if f.Direction != "" {
			delta += " (" + f.Direction + ")"
		}
		show := results.DisplayFor(f.Unit, f.Old.Center, f.New.Center)
		rows = append(rows, []string{f.Scenario, f.Variant, f.Contender, f.Label, show.Unit,
			summary(f.Old, show), summary(f.New, show), delta, pn(f)})
		for _, w := range f.Warnings {
			if !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
		}
	}
	p.Table([]string{"scenario", "variant", "contender", "figure", "unit", "old", "new", "delta", "p, n"}, 5, rows)
	if len(c.Claims) > 0 {
		p.Paragraph("Claims checked (see each run's report for the thresholds):", false)
		rows = nil
		for _, cl := range c.Claims {
			change := ""
			if cl.Old != cl.New {
				change = "changed"
			}
			rows = append(rows, []string{cl.ID, orDash(cl.Old), orDash(cl.New), change})
		}
		p.Table([]string{"claim", "old", "new", "change"}, 4, rows)
	}
	agreementMarkdown(p, c.Verdicts)
	if len(c.OnlyOld) > 0 {
		p.Paragraph(fmt.Sprintf("Only in %s: %s.", c.OldRun, strings.Join(c.OnlyOld, "; ")), false)
	}
	if len(c.OnlyNew) > 0 {
		p.Paragraph(fmt.Sprintf("Only in %s: %s.", c.NewRun, strings.Join(c.OnlyNew, "; ")), false)
	}
	if len(warnings) > 0 {
		p.Paragraph("Statistics warnings:", false)
		p.List(warnings)
	}
	_, err := w.Write(p.Markdown())
	return err
}

// tallyText says how many figures differ at p < alpha, how many would by
// chance alone, and which changes survive Benjamini–Hochberg.
func (c *Comparison) tallyText(alpha float64) string {
	n, better, worse := c.Tally()
	text := fmt.Sprintf("%d of %d figures differ at p < %v (%d better, %d worse); if nothing had changed, at most about %s would by chance alone. ",
		n, len(c.Figures), alpha, better, worse, results.Num(alpha*float64(len(c.Figures))))
	const how = "the Benjamini–Hochberg procedure at a false discovery rate of %v (over Welch's t-test on the logarithms, whose p-values the sample size does not floor)"
	if len(c.Discoveries) == 0 {
		return text + "None survives " + fmt.Sprintf(how, alpha) + ": no change beyond chance at this resolution."
	}
	const listed = 10
	var names []string
	for _, i := range c.Discoveries[:min(listed, len(c.Discoveries))] {
		f := c.Figures[i]
		change := f.Delta
		if change == "~" {
			change = fmt.Sprintf("%+.2f%%", 100*(f.New.Center/f.Old.Center-1))
		}
		names = append(names, fmt.Sprintf("%s/%s/%s %s %s", f.Scenario, f.Variant, f.Contender, f.Label, change))
	}
	if len(c.Discoveries) > listed {
		names = append(names, fmt.Sprintf("and %d more", len(c.Discoveries)-listed))
	}
	verb := "survive"
	if len(c.Discoveries) == 1 {
		verb = "survives"
	}
	return text + fmt.Sprintf("%d %s "+how+": %s.", len(c.Discoveries), verb, alpha, strings.Join(names, "; "))
}

// orDash prints a verdict, or – for a claim the run does not check.
func orDash(v analysis.ClaimVerdict) string {
	if v == "" {
		return "–"
	}
	return string(v)
}

// summary prints a median in show's unit with its interval in percent.
func summary(s benchmath.Summary, show results.Display) string {
	return show.Num(s.Center) + " ± " + s.PctRangeString()
}

func pn(f Figure) string {
	n := fmt.Sprintf("n=%d", f.OldN)
	if f.OldN != f.NewN {
		n = fmt.Sprintf("n=%d+%d", f.OldN, f.NewN)
	}
	return fmt.Sprintf("p=%.3f %s", f.P, n)
}
