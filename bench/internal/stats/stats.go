// Package stats holds the few order statistics the bench computes from
// plain samples: the median across repetitions and nearest-rank
// percentiles of short series (handover trials, per-client waits).
// Latency percentiles come from HdrHistogram instead.
package stats

import "math"

// Median returns the median of sorted, which must not be empty; an even
// count takes the mean of the two middle values.
func Median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted, which
// must not be empty, by the nearest-rank rule: the smallest value with at
// least p% of the values at or below it. Percentile(sorted, 50) is the
// lower median.
func Percentile(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
