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

// MedianCI returns a distribution-free confidence interval of the median
// of the population sorted was drawn from: the order statistics x(k) and
// x(n+1-k) with the largest k for which the binomial tails leave at least
// the confidence level between them (95%: at most 2.5% below x(k)).
// level is the interval's actual coverage; with fewer than six values no
// pair reaches 95% and the interval is the whole range, with its lower
// coverage. sorted must not be empty.
func MedianCI(sorted []float64) (lo, hi, level float64) {
	n := len(sorted)
	// tail(k) = P(Bin(n, 1/2) <= k-1): the chance that fewer than k
	// values fall below the median.
	tail := func(k int) float64 {
		var p float64
		for i := 0; i < k; i++ {
			p += binomial(n, i)
		}
		return p / math.Pow(2, float64(n))
	}
	k := 1
	for k+1 <= (n+1)/2 && tail(k+1) <= 0.025 {
		k++
	}
	return sorted[k-1], sorted[n-k], 1 - 2*tail(k)
}

// binomial returns n choose k as a float64.
func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}
