package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// figures lays out one run as bench/analysis reads it (a): the
// contenders in display order, their families, the claims and the soak
// beside the run. It looks no figure up.
type figures struct {
	r *results.Results
	// info describes each contender (results.Results.Contenders).
	info map[string]results.ContenderInfo
	// contenders in display order: the locks grouped by family (families
	// in order of first appearance), then the floors.
	contenders []string
	// claims are the checked claims, for the findings of each section.
	claims []analysis.Claim
	// a is the run's analysis: capabilities, rankings, use-case picks.
	a *analysis.Run
	// soak is the newest chaos soak beside the run's folder, nil when
	// there is none or the report is rendered without a folder.
	soak *soakRef
}

func newFigures(r *results.Results) *figures { return figuresOf(analysis.New(r)) }

// figuresOf lays out the run a reads.
func figuresOf(a *analysis.Run) *figures {
	r := a.Results()
	f := &figures{r: r, info: map[string]results.ContenderInfo{}, a: a}
	for _, c := range r.Contenders {
		f.info[c.Name] = c
	}
	// The analysis orders the locks by family; the floors follow.
	f.contenders = append(f.a.Locks(), f.a.Floors()...)
	return f
}

// isFloor reports whether a contender is a baseline rather than a lock.
func (f *figures) isFloor(c string) bool { return f.info[c].Floor }

// family returns a contender's family; one without is its own family.
func (f *figures) family(c string) string {
	if fam := f.info[c].Family; fam != "" {
		return fam
	}
	return c
}

// spread prints a row as "median (min–max)" in display d, or the median
// alone when there is one repetition or no spread at the printed
// precision.
func spread(x results.Row, d results.Display) string {
	if x.N > 1 && d.Num(x.Min) != d.Num(x.Max) {
		return fmt.Sprintf("%s (%s–%s)", d.Num(x.Median), d.Num(x.Min), d.Num(x.Max))
	}
	return d.Num(x.Median)
}

// spread is the package spread, but a yes/no figure over repetitions
// reads as how many said yes ("1 of 2"), never as a median of 0.500.
func (f *figures) spread(x results.Row, d results.Display) string {
	if x.Unit == "bool" {
		return results.Span(f.a.PerRepetition(x), x.Unit)
	}
	return spread(x, d)
}

// withDisplayUnit adds a display's unit to a column head: "unavailable
// (ms)"; a head of counts stays as it is.
func withDisplayUnit(head string, d results.Display) string {
	if d.Unit == "" {
		return head
	}
	return head + " (" + d.Unit + ")"
}

// rowDisplay picks one display for the rows of a column or sentence.
func rowDisplay(xs ...results.Row) results.Display {
	var unit string
	var vs []float64
	for _, x := range xs {
		unit = x.Unit
		vs = append(vs, x.Median, x.Min, x.Max)
	}
	return results.DisplayFor(unit, vs...)
}

// duration returns a duration parameter (e.g. "lease") of a contender from
// its recorded settings, as the analysis reads it.
func (f *figures) duration(contender, name string) (time.Duration, bool) {
	return f.a.Duration(contender, name)
}

// repetitionsText says how many repetitions the figures of each scenario
// rest on, read from the data: "latency n=3, scale n=1, handover n=2–3".
func (f *figures) repetitionsText() string {
	var parts []string
	for _, sr := range f.a.RepetitionsPerScenario() {
		if sr.Fewest == sr.Most {
			parts = append(parts, fmt.Sprintf("%s n=%d", sr.Scenario, sr.Fewest))
		} else {
			parts = append(parts, fmt.Sprintf("%s n=%d–%d", sr.Scenario, sr.Fewest, sr.Most))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("the run asked for %d", f.r.Parameters.Repetitions)
	}
	return strings.Join(parts, ", ")
}
