package analysis

import (
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// A Run indexes one run's results for the analysis. It is read-only
// after New and safe for concurrent use.
type Run struct {
	r    *results.Results
	info map[string]results.ContenderInfo
	// raws are the raw records by scenario, contender and variant, in
	// repetition order.
	raws map[rawKey][]results.Raw
	// locks are the contenders that lock (not floors), grouped by family
	// in order of first appearance; floors are the baselines, in order of
	// first appearance.
	locks, floors []string
	// matrix, when set, is the run whose capability matrix names the
	// capabilities (C1, …): a sweep's other profiles are named as its
	// first's.
	matrix *Run
}

type rawKey struct{ scenario, contender, variant string }

// New indexes r.
func New(r *results.Results) *Run {
	run := &Run{r: r, info: map[string]results.ContenderInfo{}, raws: map[rawKey][]results.Raw{}}
	for _, x := range r.Raw {
		k := rawKey{x.Scenario, x.Contender, x.Variant}
		run.raws[k] = append(run.raws[k], x)
	}
	for _, xs := range run.raws {
		slices.SortStableFunc(xs, func(a, b results.Raw) int { return a.Repetition - b.Repetition })
	}
	var all []string
	add := func(c string) {
		if !slices.Contains(all, c) {
			all = append(all, c)
		}
	}
	for _, c := range r.Parameters.Contenders {
		add(c)
	}
	for _, c := range r.Contenders {
		run.info[c.Name] = c
		add(c.Name)
	}
	for _, x := range r.Summary {
		add(x.Contender)
	}
	var families []string
	for _, c := range all {
		if fam := run.Family(c); !run.info[c].Floor && !slices.Contains(families, fam) {
			families = append(families, fam)
		}
	}
	for _, fam := range families {
		for _, c := range all {
			if !run.info[c].Floor && run.Family(c) == fam {
				run.locks = append(run.locks, c)
			}
		}
	}
	for _, c := range all {
		if run.info[c].Floor {
			run.floors = append(run.floors, c)
		}
	}
	return run
}

// Results returns the run the analysis reads.
func (run *Run) Results() *results.Results { return run.r }

// Locks lists the contenders that lock (floors left out), grouped by
// family.
func (run *Run) Locks() []string { return slices.Clone(run.locks) }

// Floors lists the baselines, which lock nothing.
func (run *Run) Floors() []string { return slices.Clone(run.floors) }

// Family returns a contender's family; one without is its own family.
func (run *Run) Family(c string) string {
	if fam := run.info[c].Family; fam != "" {
		return fam
	}
	return c
}

// variants lists the variants of a scenario in order of first appearance
// in the summary.
func (run *Run) variants(scenario string) []string {
	var out []string
	for _, x := range run.r.Summary {
		if x.Scenario == scenario && !slices.Contains(out, x.Variant) {
			out = append(out, x.Variant)
		}
	}
	return out
}

// Scenarios lists the scenarios in the run's order, then any scenario
// only the data names.
func (run *Run) Scenarios() []string {
	var out []string
	for _, s := range run.r.Parameters.Scenarios {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, x := range run.r.Summary {
		if !slices.Contains(out, x.Scenario) {
			out = append(out, x.Scenario)
		}
	}
	return out
}

// Variants lists the variants of a scenario in order of first
// appearance in the summary.
func (run *Run) Variants(scenario string) []string { return run.variants(scenario) }

// params returns the recorded parameters of a scenario's variant.
func (run *Run) params(scenario, variant string) results.VariantParams {
	s, _ := run.r.Scenario(scenario)
	p, _ := s.Variant(variant)
	return p
}

// Title names a scenario for readers.
func (run *Run) Title(scenario string) string {
	if s, ok := run.r.Scenario(scenario); ok && s.Title != "" {
		return s.Title
	}
	return scenario
}

// values returns a figure of one contender and variant, one value per
// repetition in repetition order, and its unit.
func (run *Run) values(scenario, contender, variant, metric string) ([]float64, string) {
	var vals []float64
	unit := ""
	for _, x := range run.raws[rawKey{scenario, contender, variant}] {
		for _, m := range x.Metrics {
			if m.Name == metric {
				vals, unit = append(vals, m.Value), m.Unit
				break
			}
		}
	}
	return vals, unit
}

// pairedValues returns metric's and other's values of each repetition
// that has both, in the same order: the two figures of one trial.
func (run *Run) pairedValues(scenario, contender, variant, metric, other string) (got, than []float64) {
	for _, x := range run.raws[rawKey{scenario, contender, variant}] {
		var a, b *results.Metric
		for i := range x.Metrics {
			switch x.Metrics[i].Name {
			case metric:
				a = &x.Metrics[i]
			case other:
				b = &x.Metrics[i]
			}
		}
		if a != nil && b != nil {
			got, than = append(got, a.Value), append(than, b.Value)
		}
	}
	return got, than
}

// measures reports whether any contender has a figure of metric in a
// variant of scenario.
func (run *Run) measures(scenario, variant, metric string) bool {
	for _, x := range run.r.Summary {
		if x.Scenario == scenario && x.Variant == variant && x.Metric == metric {
			return true
		}
	}
	return false
}

// skipped returns why a contender was not measured in a variant, or "".
func (run *Run) skipped(scenario, contender, variant string) string {
	for _, x := range run.raws[rawKey{scenario, contender, variant}] {
		if x.Skipped != "" {
			return x.Skipped
		}
	}
	return ""
}

// Duration returns a duration setting (e.g. "lease") of a contender. A
// contender whose setting is not a duration ("= lease") gets the first
// contender's in name order that is: parity makes it the same for
// every contender.
func (run *Run) Duration(contender, name string) (time.Duration, bool) {
	parse := func(set results.Settings) (time.Duration, bool) {
		d, err := time.ParseDuration(set[name])
		return d, err == nil && d > 0
	}
	if d, ok := parse(run.r.Parameters.Contender[contender]); ok {
		return d, true
	}
	names := make([]string, 0, len(run.r.Parameters.Contender))
	for c := range run.r.Parameters.Contender {
		names = append(names, c)
	}
	slices.Sort(names)
	for _, c := range names {
		if d, ok := parse(run.r.Parameters.Contender[c]); ok {
			return d, true
		}
	}
	return 0, false
}
