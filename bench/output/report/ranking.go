package report

import (
	"fmt"
	"slices"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// singleRunFactor is how far apart two figures of one repetition each
// must be to be ranked (analysis.SingleRunFactor).
const singleRunFactor = analysis.SingleRunFactor

// rankText prints a ranking as benchstat would read it: "a 1.2 ms (n=3)
// ~ b 1.3 ms (n=3), then c 5.0 ms (n=3, 4.2×)" (analysis.JoinRanking
// joins it), a noisy figure with its spread. A ratio to the best is given
// only where both figures are positive: a margin below zero has no
// meaningful ratio.
func rankText(es []analysis.Entry) string {
	best := 0.0
	if len(es) > 0 && es[0].Failed == "" {
		best = spanOf(es[0].Values).median
	}
	return analysis.JoinRanking(es, func(e analysis.Entry) string {
		s := spanOf(e.Values)
		extra := ""
		if !e.Noise && e.Place != es[0].Place && best > 0 && s.median > 0 {
			extra = ", " + results.Ratio(s.median, best)
		}
		if e.Noise {
			show := results.DisplayFor(e.Unit, s.median)
			extra += fmt.Sprintf(", noise: %s to %s", show.Format(s.lo), show.Format(s.hi))
		}
		return fmt.Sprintf("%s (n=%d%s)", results.Format(s.median, e.Unit), s.n, extra)
	})
}

// span is a figure's median and spread across repetitions.
type span struct {
	median, lo, hi float64
	n              int
}

// spanOf aggregates per-repetition values like results.Summarize.
func spanOf(vals []float64) span {
	v := slices.Clone(vals)
	slices.Sort(v)
	n := len(v)
	return span{results.Median(v), v[0], v[n-1], n}
}
