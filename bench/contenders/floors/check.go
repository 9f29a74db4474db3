package floors

import "github.com/monolock/monolock-bench/bench/results"

// belowLock is the method check that a floor is not slower than the lock
// it bounds: a floor does a subset of its lock's work on the same path,
// so a floor above its lock beyond the measurement's spread means the
// method, not the locks, made the figure (the machine drifted between
// them). The spread is each contender's interval of the median across
// the latency scenario's alternating blocks.
func belowLock(floor, lock, what string) results.ClaimRule {
	return results.ClaimRule{
		ID:        "floor-below-" + lock,
		Claim:     "Method check: the " + floor + " is not slower than " + lock + ", " + what + ".",
		Statement: "Uncontended (latency, w1), the lower end of " + floor + "'s acquire p50 interval (per-block medians) does not exceed the upper end of " + lock + "'s.",
		Threshold: "holds when " + floor + " acquire_p50_ci_lo ≤ " + lock + " acquire_p50_ci_hi in every repetition; fails when above in every repetition (then the latency figures of this run are not trustworthy)",
		Scenario:  "latency", Variant: "w1", Subject: floor, Metric: results.LatencyMetrics.AcquireP50CILo.Name,
		Op: results.AtMost, Than: results.ClaimBound{Contender: lock, Metric: results.LatencyMetrics.AcquireP50CIHi.Name},
		Spread: results.SpreadRange,
		Quote:  []results.ClaimQuote{{Metric: results.LatencyMetrics.AcquireP50.Name}, {Contender: lock, Metric: results.LatencyMetrics.AcquireP50.Name}},
	}
}
