package results

import (
	"slices"
)

// Summarize aggregates the per-repetition metrics of raw into rows: one per
// scenario × contender × variant × metric, in order of first appearance,
// with median, min and max across repetitions and N the number of
// repetitions that reported the metric. An even count takes the mean of the
// two middle values as the median.
func Summarize(raw []Raw) []Row {
	type key struct{ scenario, contender, variant, metric string }
	var order []key
	units := map[key]string{}
	values := map[key][]float64{}
	for _, r := range raw {
		for _, m := range r.Metrics {
			k := key{r.Scenario, r.Contender, r.Variant, m.Name}
			if _, ok := values[k]; !ok {
				order = append(order, k)
				units[k] = m.Unit
			}
			values[k] = append(values[k], m.Value)
		}
	}
	rows := make([]Row, 0, len(order))
	for _, k := range order {
		v := slices.Clone(values[k])
		slices.Sort(v)
		rows = append(rows, Row{
			Scenario: k.scenario, Contender: k.contender, Variant: k.variant,
			Metric: k.metric, Unit: units[k],
			Median: median(v), Min: v[0], Max: v[len(v)-1], N: len(v),
		})
	}
	return rows
}

// median of sorted, non-empty v.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
