package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// An entry is one contender's figure in a ranking: its values, one per
// repetition, or why it has none that counts. A failed entry (a trial
// whose waiter never got the lock within its bound, a trial that never
// granted) ranks last, whatever its figure.
type entry struct {
	contender string
	vals      []float64
	unit      string
	// failed, when set, says why the entry ranks last ("never (> 3 s)",
	// "did not grant").
	failed string
	// place is 1-based; entries whose figures cannot be told apart share
	// a place (a tie, "~"). A noisy entry has none (0): it is shown after
	// the ranked ones, never ranked.
	place int
	noise bool
}

func (e entry) span() span { return spanOf(e.vals) }

// singleRunFactor is how far apart two figures of one repetition each
// must be to be ranked (analysis.SingleRunFactor).
const singleRunFactor = analysis.SingleRunFactor

// fromAnalysis is a ranking of the analysis as the renderer's entries.
func fromAnalysis(es []analysis.Entry) []entry {
	out := make([]entry, len(es))
	for i, e := range es {
		out[i] = entry{contender: e.Contender, vals: e.Values, unit: e.Unit, failed: e.Failed, place: e.Place, noise: e.Noise}
	}
	return out
}

// rankText prints a ranking as benchstat would read it: "a 1.2 ms (n=3)
// ~ b 1.3 ms (n=3), then c 5.0 ms (n=3, 4.2×)": "~" joins figures inside
// each other's noise, "then" separates better from worse (whatever the
// direction), noisy figures follow unranked, and a failed entry shows
// why. A ratio to the best is given only where both figures are
// positive: a margin below zero has no meaningful ratio.
func rankText(es []entry) string {
	var b strings.Builder
	best := 0.0
	for i, e := range es {
		switch {
		case i == 0 && e.noise:
			b.WriteString("not ranked (noise): ")
		case i == 0:
		case e.noise && !es[i-1].noise:
			b.WriteString("; not ranked (noise): ")
		case e.noise:
			b.WriteString(", ")
		case e.place == es[i-1].place:
			b.WriteString(" ~ ")
		default:
			b.WriteString(", then ")
		}
		b.WriteString(e.contender + " ")
		if e.failed != "" {
			b.WriteString(e.failed)
			continue
		}
		s := e.span()
		if i == 0 {
			best = s.median
		}
		extra := ""
		if !e.noise && e.place != es[0].place && best > 0 && s.median > 0 {
			extra = ", " + results.Ratio(s.median, best)
		}
		if e.noise {
			show := results.DisplayFor(e.unit, s.median)
			extra += fmt.Sprintf(", noise: %s to %s", show.Format(s.lo), show.Format(s.hi))
		}
		fmt.Fprintf(&b, "%s (n=%d%s)", results.Format(s.median, e.unit), s.n, extra)
	}
	return b.String()
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
