package results

import (
	"slices"
)

// Summarize aggregates the per-repetition metrics of raw into rows: one per
// scenario × contender × variant × metric, in order of first appearance,
// with median, min and max across repetitions, N the number of
// repetitions that reported the metric, and the metric's better direction
// as its first record gives it. An even count takes the mean of the
// two middle values as the median.
func Summarize(raw []Raw) []Row {
	type key struct{ scenario, contender, variant, metric, network string }
	var order []key
	units, better := map[key]string{}, map[key]string{}
	values := map[key][]float64{}
	for _, r := range raw {
		for _, m := range r.Metrics {
			k := key{r.Scenario, r.Contender, r.Variant, m.Name, r.Network}
			if _, ok := values[k]; !ok {
				order = append(order, k)
				units[k], better[k] = m.Unit, m.Better
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
			Median: Median(v), Min: v[0], Max: v[len(v)-1], N: len(v),
			Better: better[k], Network: k.network,
		})
	}
	return rows
}

// Median returns the median of sorted, which must not be empty; an even
// count takes the mean of the two middle values. It is exact (benchmath's
// Center interpolates and differs in the last bits), so a summary
// recomputed from the raw records matches the stored one.
func Median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
