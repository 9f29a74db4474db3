package analysis

import (
	"cmp"
	"math"
	"slices"

	"github.com/monolock/monolock-bench/bench/results"
	"golang.org/x/perf/benchmath"
)

// An Entry is one contender's figure in a ranking: its values, one per
// repetition, or why it has none that counts. A failed entry (a trial
// whose waiter never got the lock within its bound, a trial that never
// granted) ranks last, whatever its figure.
type Entry struct {
	Contender string
	Values    []float64
	Unit      string
	// Condition is what the figure was measured under; Rank's callers
	// rank only entries whose conditions match.
	Condition Condition
	// Failed, when set, says why the entry ranks last ("never (> 3 s)",
	// "did not grant").
	Failed string
	// Place is 1-based; entries whose figures cannot be told apart share
	// a place (a tie, "~"). A noisy entry has none (0): it is shown after
	// the ranked ones, never ranked.
	Place int
	Noise bool
}

// SingleRunFactor is how far apart two figures of one repetition each
// must be to be ranked: with n = 1 there is no spread to judge noise by,
// so only a gross difference counts.
const SingleRunFactor = 2

// minDifference is the smallest difference of medians, relative to the
// better one, that ranks two figures even when their repetitions are
// apart: a winner by 0.4% is a tie.
const minDifference = 0.05

// noiseSpread is the spread across repetitions, (max − min) / median,
// above which a figure is noise: it is shown, marked so, and never ranked
// (an open-loop p99 of ±600%).
const noiseSpread = 1.0

// compareAlpha is the significance level of the U-test that may separate
// entries whose repetitions overlap (as benchstat's default).
const compareAlpha = 0.05

// Median is the median of a figure's repetitions.
func Median(vals []float64) float64 {
	v := slices.Clone(vals)
	slices.Sort(v)
	return results.Median(v)
}

// Noisy reports whether a figure's repetitions spread more than
// noiseSpread.
func Noisy(vals []float64) bool {
	if len(vals) < 2 {
		return false
	}
	m := Median(vals)
	return m != 0 && (slices.Max(vals)-slices.Min(vals))/math.Abs(m) > noiseSpread
}

// Separable reports whether two figures differ beyond their noise: their
// medians differ by minDifference at least, and both rest on at least
// two repetitions whose ranges do not overlap, or a Mann-Whitney U-test
// (benchmath, assuming nothing about the distribution) finds the
// difference significant, or both rest on one repetition and one is at
// least SingleRunFactor times the other.
func Separable(a, b []float64) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if Noisy(a) || Noisy(b) {
		return false
	}
	ma, mb := Median(a), Median(b)
	if d := math.Abs(ma - mb); d < minDifference*max(math.Abs(ma), math.Abs(mb)) {
		return false
	}
	if len(a) < 2 || len(b) < 2 {
		d, m := math.Abs(ma-mb), min(math.Abs(ma), math.Abs(mb))
		return d > 0 && d >= (SingleRunFactor-1)*m
	}
	if slices.Max(a) < slices.Min(b) || slices.Max(b) < slices.Min(a) {
		return true
	}
	th := benchmath.Thresholds{CompareAlpha: compareAlpha}
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), &th), benchmath.NewSample(slices.Clone(b), &th))
	return c.P < c.Alpha
}

// Rank orders entries best first by their medians (higherIsBetter says
// which way), then the noisy ones (unranked), failed entries last, and
// gives each ranked entry a place. Entries share a place only when none
// of them is separable from another: an entry starts a new place as soon
// as it is separable from any entry of the current one, so a figure in
// the middle cannot tie two neighbours that are apart. Rank does not
// look at conditions: its callers pass entries whose conditions match.
func Rank(es []Entry, higherIsBetter bool) []Entry {
	out := slices.Clone(es)
	group := func(e Entry) int {
		switch {
		case e.Failed != "":
			return 2
		case Noisy(e.Values):
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(a, b Entry) int {
		if ga, gb := group(a), group(b); ga != gb || ga == 2 {
			return cmp.Compare(ga, gb)
		}
		am, bm := Median(a.Values), Median(b.Values)
		if higherIsBetter {
			am, bm = bm, am
		}
		return cmp.Compare(am, bm)
	})
	first := 0 // index of the first entry of the current place
	for i := range out {
		switch group(out[i]) {
		case 1:
			out[i].Noise = true
			continue
		case 2:
			out[i].Place = i + 1
			if i > 0 && out[i-1].Failed != "" {
				out[i].Place = out[i-1].Place
			}
			continue
		}
		out[i].Place = i + 1
		if i == 0 {
			continue
		}
		tied := true
		for _, e := range out[first:i] {
			tied = tied && !Separable(e.Values, out[i].Values)
		}
		if tied {
			out[i].Place = out[first].Place
		} else {
			first = i
		}
	}
	return out
}
