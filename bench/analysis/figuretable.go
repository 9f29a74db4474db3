package analysis

import (
	"slices"

	"github.com/monolock/monolock-bench/bench/results"
)

// A Figure is one contender's figure of a metric in one scenario variant:
// its summary (median, min–max, n), or why it counts as failed.
type Figure struct {
	Contender string
	// Row is the summary; Measured says whether there is one.
	Row      results.Row
	Measured bool
	// Failed, when set, says why the figure counts as failed
	// (FailedFigure); a cell shows it instead of the figure.
	Failed string
}

// A FigureColumn is one metric of one scenario variant: a figure per
// contender that has one or failed, locks first then floors.
type FigureColumn struct {
	// Label names the metric for readers (MetricLabel).
	Label   string
	Figures []Figure
}

// A FigureTable is every figure of one variant of a scenario: a column
// per metric in order of first appearance (the worker count left out:
// it is a parameter, in the variant's name), and the contenders the
// variant was not measured for, with why ("contender: reason").
type FigureTable struct {
	Variant     string
	Columns     []FigureColumn
	NotMeasured []string
}

// Column reads one metric of a scenario variant across the contenders.
func (run *Run) Column(scenario, variant, metric string) FigureColumn {
	col := FigureColumn{Label: run.MetricLabel(scenario, metric)}
	for _, c := range run.ContendersIn(scenario) {
		x, ok := run.row(scenario, c, variant, metric)
		why := run.FailedFigure(scenario, c, variant, metric, ok)
		if ok || why != "" {
			col.Figures = append(col.Figures, Figure{Contender: c, Row: x, Measured: ok, Failed: why})
		}
	}
	return col
}

// FigureTables reads every figure of a scenario, a table per variant;
// a variant every contender skipped comes last, with only its reasons.
func (run *Run) FigureTables(scenario string) []FigureTable {
	variants := run.variants(scenario)
	for _, x := range run.r.Raw {
		if x.Scenario == scenario && x.Skipped != "" && !slices.Contains(variants, x.Variant) {
			variants = append(variants, x.Variant)
		}
	}
	var out []FigureTable
	for _, v := range variants {
		t := FigureTable{Variant: v}
		var metrics []string
		for _, x := range run.r.Summary {
			if x.Scenario != scenario || x.Variant != v || x.Metric == results.ThroughputMetrics.Workers.Name || slices.Contains(metrics, x.Metric) {
				continue // workers (throughput's, latency's alike) is a parameter, in the variant name
			}
			metrics = append(metrics, x.Metric)
			t.Columns = append(t.Columns, run.Column(scenario, v, x.Metric))
		}
		for _, x := range run.r.Raw {
			if x.Scenario == scenario && x.Variant == v && x.Skipped != "" {
				if line := x.Contender + ": " + x.Skipped; !slices.Contains(t.NotMeasured, line) {
					t.NotMeasured = append(t.NotMeasured, line)
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// MetricLabel names a metric for readers: its declared label, or its
// name in an old run that declared none.
func (run *Run) MetricLabel(scenario, metric string) string {
	if info, ok := run.r.Scenario(scenario); ok {
		if m, ok := info.Metric(metric); ok && m.Label != "" {
			return m.Label
		}
	}
	return metric
}
