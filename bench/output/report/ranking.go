package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
	"golang.org/x/perf/benchmath"
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
// must be to be ranked: with n = 1 there is no spread to judge noise by,
// so only a gross difference counts.
const singleRunFactor = 2

// minDifference is the smallest difference of medians, relative to the
// better one, that ranks two figures even when their repetitions are
// apart: a winner by 0.4% is a tie.
const minDifference = 0.05

// noiseSpread is the spread across repetitions, (max − min) / median,
// above which a figure is noise: it is shown, marked so, and never ranked
// (an open-loop p99 of ±600%).
const noiseSpread = 1.0

// noisy reports whether a figure's repetitions spread more than
// noiseSpread.
func noisy(vals []float64) bool {
	s := spanOf(vals)
	return len(vals) > 1 && s.median != 0 && (s.hi-s.lo)/math.Abs(s.median) > noiseSpread
}

// compareAlpha is the significance level of the U-test that may separate
// entries whose repetitions overlap (as benchstat's default).
const compareAlpha = 0.05

// separable reports whether two figures differ beyond their noise: their
// medians differ by minDifference at least, and both
// rest on at least two repetitions whose ranges do not overlap, or a
// Mann-Whitney U-test (benchmath, assuming nothing about the
// distribution) finds the difference significant, or both rest on one
// repetition and one is at least singleRunFactor times the other.
func separable(a, b []float64) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if noisy(a) || noisy(b) {
		return false
	}
	sa, sb := spanOf(a), spanOf(b)
	if d := math.Abs(sa.median - sb.median); d < minDifference*max(math.Abs(sa.median), math.Abs(sb.median)) {
		return false
	}
	if len(a) < 2 || len(b) < 2 {
		d, m := math.Abs(sa.median-sb.median), min(math.Abs(sa.median), math.Abs(sb.median))
		return d > 0 && d >= (singleRunFactor-1)*m
	}
	if sa.hi < sb.lo || sb.hi < sa.lo {
		return true
	}
	th := benchmath.Thresholds{CompareAlpha: compareAlpha}
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), &th), benchmath.NewSample(slices.Clone(b), &th))
	return c.P < c.Alpha
}

// rank orders entries best first by their medians (higherIsBetter says
// which way), then the noisy ones (unranked), failed entries last, and
// gives each ranked entry a place. Entries share a place only when none
// of them is separable from another: an entry starts a new place as soon
// as it is separable from any entry of the current one, so a figure in
// the middle cannot tie two neighbours that are apart.
func rank(es []entry, higherIsBetter bool) []entry {
	out := slices.Clone(es)
	group := func(e entry) int {
		switch {
		case e.failed != "":
			return 2
		case noisy(e.vals):
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(a, b entry) int {
		if ga, gb := group(a), group(b); ga != gb || ga == 2 {
			return cmp.Compare(ga, gb)
		}
		am, bm := a.span().median, b.span().median
		if higherIsBetter {
			am, bm = bm, am
		}
		return cmp.Compare(am, bm)
	})
	first := 0 // index of the first entry of the current place
	for i := range out {
		switch group(out[i]) {
		case 1:
			out[i].noise = true
			continue
		case 2:
			out[i].place = i + 1
			if i > 0 && out[i-1].failed != "" {
				out[i].place = out[i-1].place
			}
			continue
		}
		out[i].place = i + 1
		if i == 0 {
			continue
		}
		tied := true
		for _, e := range out[first:i] {
			tied = tied && !separable(e.vals, out[i].vals)
		}
		if tied {
			out[i].place = out[first].place
		} else {
			first = i
		}
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
			extra = ", " + ratio(s.median, best)
		}
		if e.noise {
			show := results.DisplayFor(e.unit, s.median)
			extra += fmt.Sprintf(", noise: %s to %s", show.Format(s.lo), show.Format(s.hi))
		}
		fmt.Fprintf(&b, "%s (n=%d%s)", results.Format(s.median, e.unit), s.n, extra)
	}
	return b.String()
}
