package check

import "math"

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Rate is a proportion with its Wilson 95% score interval: Violations of
// Trials (here: applied faults with at least one violation attributed
// to them, of the applied faults).
type Rate struct {
	Violations int     `json:"violations"`
	Trials     int     `json:"trials"`
	Rate       float64 `json:"rate"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
}

// Wilson returns k of n with its Wilson 95% score interval. Unlike the
// normal approximation it stays inside [0, 1] and is not empty at k = 0:
// 0 of 20 has the upper bound 16.1%. With n = 0 nothing is shown: the
// interval is [0, 1].
func Wilson(k, n int) Rate {
	r := Rate{Violations: k, Trials: n, Lo: 0, Hi: 1}
	if n <= 0 {
		return r
	}
	p := float64(k) / float64(n)
	nf := float64(n)
	z2 := z95 * z95
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / denom
	r.Rate = p
	r.Lo = math.Max(0, center-half)
	r.Hi = math.Min(1, center+half)
	if k == 0 {
		r.Lo = 0 // exactly, not a rounding error's distance from it
	}
	if k == n {
		r.Hi = 1
	}
	return r
}

// TrialsForUpperBound returns the fewest trials whose Wilson 95% upper
// bound at zero violations is at most hi (0 < hi < 1): 22 for 15%, 35 for
// 10%. It returns 0 for an hi outside (0, 1).
func TrialsForUpperBound(hi float64) int {
	if hi <= 0 || hi >= 1 {
		return 0
	}
	// At k = 0 the bound is z²/(n+z²), so n ≥ z²(1−hi)/hi.
	n := max(1, int(math.Ceil(z95*z95*(1-hi)/hi)))
	for Wilson(0, n).Hi > hi {
		n++
	}
	for n > 1 && Wilson(0, n-1).Hi <= hi {
		n--
	}
	return n
}
