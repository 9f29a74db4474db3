package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// figures indexes one run's summary and raw records for lookups by
// scenario, contender, variant and metric.
type figures struct {
	r    *results.Results
	rows map[figureKey]results.Row
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

type figureKey struct{ scenario, contender, variant, metric string }

func newFigures(r *results.Results) *figures {
	f := &figures{r: r, rows: map[figureKey]results.Row{}, info: map[string]results.ContenderInfo{}, a: analysis.New(r)}
	for _, c := range r.Contenders {
		f.info[c.Name] = c
	}
	for _, x := range r.Summary {
		f.rows[figureKey{x.Scenario, x.Contender, x.Variant, x.Metric}] = x
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

// row returns the summary row of one figure.
func (f *figures) row(scenario, contender, variant, metric string) (results.Row, bool) {
	x, ok := f.rows[figureKey{scenario, contender, variant, metric}]
	return x, ok
}

// scenarioContenders lists the contenders with data in a scenario, in
// display order.
func (f *figures) scenarioContenders(scenario string) []string {
	var out []string
	for _, c := range f.contenders {
		for _, x := range f.r.Summary {
			if x.Scenario == scenario && x.Contender == c {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// variants lists the variants of a scenario in order of first appearance.
func (f *figures) variants(scenario string) []string {
	var out []string
	for _, x := range f.r.Summary {
		if x.Scenario == scenario && !slices.Contains(out, x.Variant) {
			out = append(out, x.Variant)
		}
	}
	return out
}

// raws returns the raw records of one scenario variant and contender in
// repetition order.
func (f *figures) raws(scenario, contender, variant string) []results.Raw {
	var out []results.Raw
	for _, x := range f.r.Raw {
		if x.Scenario == scenario && x.Contender == contender && x.Variant == variant {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b results.Raw) int { return a.Repetition - b.Repetition })
	return out
}

// histogram merges the histograms named name of every repetition of one
// variant and contender; nil when there is none.
func (f *figures) histogram(scenario, contender, variant, name string) (*hdrhistogram.Histogram, string, error) {
	var merged *hdrhistogram.Histogram
	unit := ""
	for _, x := range f.raws(scenario, contender, variant) {
		for _, h := range x.Histograms {
			if h.Name != name {
				continue
			}
			d, err := h.Decode()
			if err != nil {
				return nil, "", fmt.Errorf("report: %w", err)
			}
			if merged == nil {
				merged, unit = d, h.Unit
				continue
			}
			merged.Merge(d)
		}
	}
	return merged, unit, nil
}

// params returns the recorded parameters of a scenario's variant (zero
// when the run declares none).
func (f *figures) params(scenario, variant string) results.VariantParams {
	s, _ := f.r.Scenario(scenario)
	p, _ := s.Variant(variant)
	return p
}

// variantsWhere lists the variants of a scenario, in order of first
// appearance, whose parameters keep accepts.
func (f *figures) variantsWhere(scenario string, keep func(results.VariantParams) bool) []string {
	var out []string
	for _, v := range f.variants(scenario) {
		if keep(f.params(scenario, v)) {
			out = append(out, v)
		}
	}
	return out
}

// title names a scenario for readers.
func (f *figures) title(scenario string) string {
	if s, ok := f.r.Scenario(scenario); ok && s.Title != "" {
		return s.Title
	}
	return scenario
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
