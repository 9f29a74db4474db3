package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// An Advice is a use case's verdict as a reader takes it, in the manner
// of hyperfine's "X ran 1.23 ± 0.04 times faster than Y" and Jepsen's
// plain verdicts: one line first, then the figures behind it, one
// statistic per sentence, each saying which (the median of n
// repetitions, or the worst repetition). The renderers lay its text out.
type Advice struct {
	Pick
	// Use are the locks to use: the first place of the deciding ranking
	// (several: a tie), or every qualified lock when nothing ranks them.
	Use []string
	// Next is the first lock ranked after them, nil when none is.
	Next *Next
	// Avoid are the best lock of each other family that failed a
	// required capability, then each pitfall that did, with its first
	// failure.
	Avoid []Avoid
	// Closest is, when no lock qualified, the lock closest to qualifying
	// and what it lacks: the line names it only with what it fails.
	Closest *Standing
	// Line is the verdict in one line: "use X; Y is next, 2.4× worse
	// (1.5–3.3×); avoid Z: ✗ C4 (no fencing tokens)".
	Line string
	// Figures are the sentences behind the line.
	Figures []string
	// Requires names the capabilities a lock must show ("requires ✓ on
	// C4, C5, C1"), "" when none; the first figure ranks the locks.
	Requires string
}

// Next is the runner-up of a ranking: how many times worse its median is
// than the pick's, and the range of that ratio over their repetitions
// (the worst of one's against the best of the other's and back).
type Next struct {
	Contender     string
	Ratio, Lo, Hi float64
}

// Avoid is a lock not to use and the first required capability it
// failed.
type Avoid struct {
	Contender string
	Failure
}

// Advise turns a use case's pick into its verdict.
func (run *Run) Advise(p Pick) Advice {
	a := Advice{Pick: p, Use: p.Supports}
	if rk := p.Deciding; rk != nil && len(a.Use) > 0 {
		a.Next = run.next(*rk)
	}
	for _, s := range p.Others {
		if len(s.Failed) > 0 {
			a.Avoid = append(a.Avoid, Avoid{Contender: s.Contender, Failure: s.Failed[0]})
		}
	}
	for _, s := range p.Pitfalls {
		a.Avoid = append(a.Avoid, Avoid{Contender: s.Contender, Failure: s.Failed[0]})
	}
	if len(a.Use) == 0 && len(p.Others) > 0 {
		c := p.Others[0]
		for _, s := range p.Others[1:] {
			if closer(s, c) {
				c = s
			}
		}
		a.Closest = &c
	}
	a.Line = run.line(a)
	a.Figures = run.figures(a)
	a.Requires = run.requires(p)
	return a
}

// next returns the first ranked entry after the first place, with its
// ratio to the best entry, or nil.
func (run *Run) next(rk Ranking) *Next {
	best := rk.Entries[0]
	for _, e := range rk.Entries[1:] {
		if e.Place == best.Place || e.Failed != "" || e.Noise {
			continue
		}
		num, den := e.Values, best.Values
		if run.HigherIsBetter(rk.ID) {
			num, den = den, num
		}
		if slices.Min(num) <= 0 || slices.Min(den) <= 0 {
			return nil // a ratio of signed margins means nothing
		}
		return &Next{Contender: e.Contender, Ratio: Median(num) / Median(den),
			Lo: slices.Min(num) / slices.Max(den), Hi: slices.Max(num) / slices.Min(den)}
	}
	return nil
}

// line writes the one-line verdict.
func (run *Run) line(a Advice) string {
	var parts []string
	switch {
	case len(a.Use) == 1:
		parts = append(parts, "use "+a.Use[0])
	case len(a.Use) > 1 && a.Deciding != nil:
		parts = append(parts, "use "+orList(a.Use)+" (a tie)")
	case len(a.Use) > 1:
		parts = append(parts, "use any of "+strings.Join(a.Use, ", "))
	case a.Closest != nil:
		parts = append(parts, "no lock showed every requirement; closest: "+a.Closest.Contender+run.lacks(*a.Closest))
	default:
		parts = append(parts, "no lock showed every requirement")
	}
	if n := a.Next; n != nil {
		next := fmt.Sprintf("%s is next, %s× worse", n.Contender, results.Num(n.Ratio))
		if n.Lo != n.Hi {
			next += fmt.Sprintf(" (%s–%s×)", results.Num(n.Lo), results.Num(n.Hi))
		}
		parts = append(parts, next)
	}
	var avoid []string
	for _, x := range a.Avoid {
		if a.Closest != nil && x.Contender == a.Closest.Contender {
			continue
		}
		avoid = append(avoid, fmt.Sprintf("%s (✗ %s: %s)", x.Contender, run.Ref(x.ID), x.text()))
	}
	if rk := a.Deciding; rk != nil {
		// qualified too, but measured under another condition: not ranked
		for _, x := range rk.Elsewhere {
			parts = append(parts, fmt.Sprintf("%s qualifies too, not comparable: %s", x.Contender, x.Reason))
		}
	}
	if len(avoid) > 0 {
		parts = append(parts, "avoid "+strings.Join(avoid, ", "))
	}
	return strings.Join(parts, "; ") + "."
}

// lacks says what keeps a lock from qualifying: its failures first.
func (run *Run) lacks(s Standing) string {
	switch {
	case len(s.Failed) > 0:
		x := s.Failed[0]
		return fmt.Sprintf(", which fails %s (%s)", run.Ref(x.ID), x.text())
	case len(s.Apart) > 0:
		x := s.Apart[0]
		return fmt.Sprintf(", %s %s", run.Ref(x.ID), x.Figure)
	case len(s.Unknown) > 0:
		return ", not measured: " + run.Ref(s.Unknown[0])
	}
	return ""
}

// figures writes the sentences behind the line: the deciding ranking and
// the further ones (medians), the locks measured under another
// condition, and every other family's best that failed nothing with what
// it lacks (no comparable evidence, or none at all).
func (run *Run) figures(a Advice) []string {
	var out []string
	if a.Deciding != nil {
		out = append(out, run.rankingSentences(*a.Deciding)...)
		if n := fewestRepetitions(a.Deciding.Entries, a.Use); n == 1 {
			out = append(out, "The deciding figure rests on one repetition.")
		}
	}
	for _, rk := range a.Further {
		out = append(out, run.rankingSentences(rk)...)
	}
	for _, s := range a.Others {
		if len(s.Failed) > 0 {
			continue // the line names it with its first failure; the matrix has the rest
		}
		var why []string
		for _, x := range s.Apart {
			why = append(why, fmt.Sprintf("%s %s", run.Ref(x.ID), x.Figure))
		}
		if len(s.Unknown) > 0 {
			var refs []string
			for _, id := range s.Unknown {
				refs = append(refs, run.Ref(id))
			}
			why = append(why, "not measured: "+strings.Join(refs, ", "))
		}
		if len(why) > 0 {
			out = append(out, fmt.Sprintf("Best of the %s family: %s, %s.", run.Family(s.Contender), s.Contender, strings.Join(why, "; ")))
		}
	}
	if len(out) == 0 {
		// nothing ranked and every family named in the line: no blank cell
		out = append(out, "Each lock's figures: the capability matrix.")
	}
	return out
}

// text is a failure's figure and which statistic it is.
func (x Failure) text() string {
	switch {
	case x.Worst == 1:
		return x.Figure + ", one repetition"
	case x.Worst > 1:
		return fmt.Sprintf("worst of %d: %s", x.Worst, x.Figure)
	}
	return x.Figure
}

// shownInRanking is how many ranked locks a sentence names; the
// scenario's own tables rank them all.
const shownInRanking = 3

// rankingSentences states one ranking: the medians at its condition,
// then each lock measured under another condition, not ranked.
func (run *Run) rankingSentences(rk Ranking) []string {
	es := rk.Entries
	n := min(shownInRanking, len(es))
	for n < min(len(es), 2*shownInRanking) && es[n].Place == es[n-1].Place {
		n++ // a tie is shown whole
	}
	joined := JoinRanking(es[:n], entryText)
	// The best of each family not shown yet: a chooser's alternatives.
	shown := map[string]bool{}
	for _, e := range es[:n] {
		shown[run.Family(e.Contender)] = true
	}
	var best []string
	for _, e := range es[n:] {
		if fam := run.Family(e.Contender); !shown[fam] {
			shown[fam] = true
			best = append(best, e.Contender+" "+entryText(e))
		}
	}
	text := fmt.Sprintf("%s, medians %s: %s", rk.Text, conditionText(rk.Condition), joined)
	if len(best) > 0 {
		text += "; best of the other families: " + strings.Join(best, ", ")
	}
	out := []string{text + "."}
	for _, x := range rk.Elsewhere {
		out = append(out, fmt.Sprintf("Not ranked: %s, median %s %s.", x.Contender, entryText(x.Entry), conditionText(x.Condition)))
	}
	return out
}

// entryText is an entry's figure: its median with min–max and n, or why
// it failed.
func entryText(e Entry) string {
	if e.Failed != "" {
		return e.Failed
	}
	return results.Span(e.Values, e.Unit)
}

// conditionText names a condition for readers: "in restart (fault
// server-kill)".
func conditionText(c Condition) string {
	text := "in " + c.Variant
	if c.Fault != "" && c.Fault != c.Variant {
		text += " (fault " + c.Fault + ")"
	}
	return text
}

// fewestRepetitions is the fewest repetitions behind the figures of the
// locks in use.
func fewestRepetitions(es []Entry, use []string) int {
	n := 0
	for _, e := range es {
		if slices.Contains(use, e.Contender) && len(e.Values) > 0 && (n == 0 || len(e.Values) < n) {
			n = len(e.Values)
		}
	}
	return n
}

// requires names what a use case requires: the capabilities the matrix
// shows by their ids, then those this run measured for no lock (a quick
// run leaves out host loss) by their labels, apart, so that a reader
// does not look for them in the matrix.
func (run *Run) requires(p Pick) string {
	if len(p.Required) == 0 {
		return ""
	}
	var shown, unmeasured []string
	for _, id := range p.Required {
		if run.matrixIndex(id) >= 0 {
			shown = append(shown, run.Ref(id))
		} else {
			unmeasured = append(unmeasured, run.Ref(id))
		}
	}
	if len(shown) == 0 || len(unmeasured) == 0 {
		return "requires ✓ on " + strings.Join(append(shown, unmeasured...), ", ")
	}
	return "requires ✓ on " + strings.Join(shown, ", ") + " and, not measured in this run, " + strings.Join(unmeasured, ", ")
}

// orList joins names with commas and a final "or".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}
