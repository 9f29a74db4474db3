package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// ScenarioRepetitions is the fewest and most repetitions behind the
// figures of one scenario.
type ScenarioRepetitions struct {
	Scenario     string
	Fewest, Most int
}

// RepetitionsPerScenario reads, per scenario with figures, how many
// repetitions they rest on.
func (run *Run) RepetitionsPerScenario() []ScenarioRepetitions {
	var out []ScenarioRepetitions
	for _, s := range run.Scenarios() {
		sr := ScenarioRepetitions{Scenario: s}
		for _, x := range run.r.Summary {
			if x.Scenario != s || x.N == 0 {
				continue
			}
			if sr.Fewest == 0 || x.N < sr.Fewest {
				sr.Fewest = x.N
			}
			sr.Most = max(sr.Most, x.N)
		}
		if sr.Most > 0 {
			out = append(out, sr)
		}
	}
	return out
}

// PerRepetition returns a summary row's figure one value per
// repetition, in repetition order: a yes/no figure reads as how many
// said yes.
func (run *Run) PerRepetition(x results.Row) []float64 {
	vals, _ := run.values(x.Scenario, x.Contender, x.Variant, x.Metric)
	return vals
}

// Noise is how far the run's figures spread across repetitions.
type Noise struct {
	// Figures counts the figures with more than one repetition and a
	// median other than 0; Median is the median of their spreads.
	Figures int
	Median  float64
	// Noisiest are the three widest, widest first.
	Noisiest []FigureSpread
}

// A FigureSpread is one figure's spread: (max−min) over its median.
type FigureSpread struct {
	// Name is "scenario/variant/contender metric label".
	Name   string
	Spread float64
}

// noisiestShown is how many of the noisiest figures Noise names.
const noisiestShown = 3

// Noise reads the spread of every figure with more than one repetition.
func (run *Run) Noise() Noise {
	var all []FigureSpread
	for _, x := range run.r.Summary {
		if x.N < 2 || x.Median == 0 {
			continue
		}
		all = append(all, FigureSpread{fmt.Sprintf("%s/%s/%s %s", x.Scenario, x.Variant, x.Contender, run.MetricLabel(x.Scenario, x.Metric)), (x.Max - x.Min) / math.Abs(x.Median)})
	}
	if len(all) == 0 {
		return Noise{}
	}
	slices.SortStableFunc(all, func(a, b FigureSpread) int {
		switch {
		case a.Spread > b.Spread:
			return -1
		case a.Spread < b.Spread:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	spreads := make([]float64, len(all))
	for i, n := range all {
		spreads[i] = n.Spread
	}
	slices.Sort(spreads)
	return Noise{Figures: len(all), Median: results.Median(spreads), Noisiest: all[:min(noisiestShown, len(all))]}
}
