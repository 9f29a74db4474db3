package analysis

import (
	"slices"

	"github.com/monolock/monolock-bench/bench/results"
)

// ScenarioFigures is every summary row of one scenario, as a flat
// summary lists them: the contenders and the figures (a variant's
// metric), each in order of first appearance.
type ScenarioFigures struct {
	Contenders []string
	Figures    []VariantFigure
}

// A VariantFigure is one metric of one variant, each contender's summary.
type VariantFigure struct {
	Variant, Metric string
	// Label names the metric for readers (MetricLabel).
	Label       string
	ByContender map[string]results.Row
}

// ScenarioFigures reads every summary row of a scenario.
func (run *Run) ScenarioFigures(scenario string) ScenarioFigures {
	var sf ScenarioFigures
	at := map[[2]string]int{}
	for _, x := range run.r.Summary {
		if x.Scenario != scenario {
			continue
		}
		if !slices.Contains(sf.Contenders, x.Contender) {
			sf.Contenders = append(sf.Contenders, x.Contender)
		}
		k := [2]string{x.Variant, x.Metric}
		i, ok := at[k]
		if !ok {
			i = len(sf.Figures)
			at[k] = i
			sf.Figures = append(sf.Figures, VariantFigure{Variant: x.Variant, Metric: x.Metric, Label: run.MetricLabel(scenario, x.Metric), ByContender: map[string]results.Row{}})
		}
		sf.Figures[i].ByContender[x.Contender] = x
	}
	return sf
}
