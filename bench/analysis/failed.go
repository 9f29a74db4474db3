package analysis

import (
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// guards returns the guard metrics the scenario's decision figures
// declare for a variant (any variant when their Variant is empty): Fail
// guards (a trial whose waiter never got the lock) or Void guards (a
// trial that never granted).
func (run *Run) guards(scenario, variant string, void bool) []results.ClaimGuard {
	s, _ := run.r.Scenario(scenario)
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

// FailedFigure says what stands instead of a contender's figure that
// failed: "never (> 5s)" for a figure the contender lacks because its
// waiter never got the lock within the trial's bound, "did not grant"
// for a figure of trials that never reached their fault (a count of
// stale writes that are zero because no second client was granted); ""
// when the figure stands as it is. has says whether the contender has
// the figure. Guard metrics and parameters stand.
func (run *Run) FailedFigure(scenario, c, variant, metric string, has bool) string {
	s, _ := run.r.Scenario(scenario)
	if m, ok := s.Metric(metric); ok && m.Kind == results.KindParameter {
		return ""
	}
	for _, void := range []bool{false, true} {
		gs := run.guards(scenario, variant, void)
		if slices.ContainsFunc(gs, func(g results.ClaimGuard) bool { return g.Metric == metric }) {
			return ""
		}
		label, _ := run.GuardHit(scenario, c, variant, gs)
		switch {
		case label == "":
		case void:
			// a figure the variant measures: the trial never reached
			// the fault it tests (one it never measures is no entry)
			if has || run.measures(scenario, variant, metric) {
				return label
			}
		case !has:
			return run.NeverText(scenario, c, variant)
		}
	}
	return ""
}

// NeverAt returns the grant bound a contender's figure stands at when
// its waiter never got the lock within it (see FailedFigure): a chart caps
// the failed trial's bar there; false when the figure did not fail so.
func (run *Run) NeverAt(scenario, c, variant, metric string) (time.Duration, bool) {
	vals, _ := run.values(scenario, c, variant, metric)
	p := run.params(scenario, variant)
	lease, ok := run.Duration(c, "lease")
	if len(vals) > 0 || p.GrantBound == nil || !ok || run.FailedFigure(scenario, c, variant, metric, false) == "" {
		return 0, false
	}
	return p.GrantBound.At(lease), true
}

// RankFigure ranks the contenders' figures of one metric in a variant
// (see Rank): those with a figure, and those whose figure failed (see
// FailedFigure), marked so and ranked last; each entry carries its
// condition.
func (run *Run) RankFigure(scenario, variant, metric string, contenders []string, higherIsBetter bool) []Entry {
	var es []Entry
	for _, c := range contenders {
		vals, unit := run.values(scenario, c, variant, metric)
		cond := run.conditionOf(scenario, variant, len(vals))
		if why := run.FailedFigure(scenario, c, variant, metric, len(vals) > 0); why != "" {
			es = append(es, Entry{Contender: c, Values: vals, Unit: unit, Failed: why, Condition: cond})
			continue
		}
		if len(vals) > 0 {
			es = append(es, Entry{Contender: c, Values: vals, Unit: unit, Condition: cond})
		}
	}
	return Rank(es, higherIsBetter)
}
