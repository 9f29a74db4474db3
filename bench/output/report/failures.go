package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// guards returns the guard metrics the scenario's decision figures
// declare for a variant (any variant when their Variant is empty): Fail
// guards (a trial whose waiter never got the lock) or Void guards (a
// trial that never granted).
func (f *figures) guards(scenario, variant string, void bool) []results.ClaimGuard {
	s, _ := f.r.Scenario(scenario)
	var out []results.ClaimGuard
	for _, d := range s.Decides {
		if d.Variant != "" && d.Variant != variant {
			continue
		}
		gs := d.Fail
		if void {
			gs = d.Void
		}
		for _, g := range gs {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}

// failedFigure says what a table shows instead of a figure that failed:
// "never (> 5s)" for a figure the contender lacks because its waiter
// never got the lock within the trial's bound, "did not grant" for a
// figure of trials that never reached their fault (a count of stale
// writes that are zero because no second client was granted); "" when
// the figure stands as it is. Guard metrics and parameters stand.
func (f *figures) failedFigure(scenario, c, variant, metric string, has bool) string {
	s, _ := f.r.Scenario(scenario)
	if m, ok := s.Metric(metric); ok && m.Kind == results.KindParameter {
		return ""
	}
	for _, void := range []bool{false, true} {
		gs := f.guards(scenario, variant, void)
		if slices.ContainsFunc(gs, func(g results.ClaimGuard) bool { return g.Metric == metric }) {
			return ""
		}
		label, _ := f.a.GuardHit(scenario, c, variant, gs)
		switch {
		case label == "":
		case void:
			// a figure the variant measures: the trial never reached
			// the fault it tests (one it never measures is no row)
			if has || f.measures(scenario, variant, metric) {
				return label
			}
		case !has:
			return f.a.NeverText(scenario, c, variant)
		}
	}
	return ""
}

// rankedEntries are the contenders' figures for a ranking, a failed one
// marked so (see failedFigure) and ranked last.
func (f *figures) rankedEntries(s, variant, metric string, contenders []string) []entry {
	var es []entry
	for _, c := range contenders {
		vals, unit := f.values(s, c, variant, metric)
		if why := f.failedFigure(s, c, variant, metric, len(vals) > 0); why != "" {
			es = append(es, entry{contender: c, vals: vals, unit: unit, failed: why})
			continue
		}
		if len(vals) > 0 {
			es = append(es, entry{contender: c, vals: vals, unit: unit})
		}
	}
	return es
}

// neverAt returns, in ms, the grant bound a failed trial's bar is capped
// at when the contender's waiter never got the lock within it (see
// failedFigure), or false.
func (f *figures) neverAt(scenario, c, variant, metric string) (float64, bool) {
	vals, _ := f.values(scenario, c, variant, metric)
	p := f.params(scenario, variant)
	lease, ok := f.duration(c, "lease")
	if len(vals) > 0 || p.GrantBound == nil || !ok || f.failedFigure(scenario, c, variant, metric, false) == "" {
		return 0, false
	}
	return float64(p.GrantBound.At(lease).Nanoseconds()) / nanoseconds["ms"], true
}

// repetitionsText says how many repetitions the figures of each scenario
// rest on, read from the data: "latency n=3, scale n=1, handover n=2–3".
func (f *figures) repetitionsText() string {
	var parts []string
	for _, s := range f.scenarios() {
		lo, hi := 0, 0
		for _, x := range f.r.Summary {
			if x.Scenario != s || x.N == 0 {
				continue
			}
			if lo == 0 || x.N < lo {
				lo = x.N
			}
			hi = max(hi, x.N)
		}
		switch {
		case hi == 0:
		case lo == hi:
			parts = append(parts, fmt.Sprintf("%s n=%d", s, lo))
		default:
			parts = append(parts, fmt.Sprintf("%s n=%d–%d", s, lo, hi))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("the run asked for %d", f.r.Parameters.Repetitions)
	}
	return strings.Join(parts, ", ")
}
