package results

// LatencyMetrics declares the latency scenario's figures, in the order a
// report shows them.
var LatencyMetrics = latencyMetrics{
	AcquireP50:          MetricSpec{Name: "acquire_p50", Unit: "us", Better: BetterLower, Label: "acquire p50", Kind: KindLatency, Key: true},
	AcquireP90:          MetricSpec{Name: "acquire_p90", Unit: "us", Better: BetterLower, Label: "acquire p90", Kind: KindLatency},
	AcquireP99:          MetricSpec{Name: "acquire_p99", Unit: "us", Better: BetterLower, Label: "acquire p99", Kind: KindLatency, Key: true},
	AcquireP999:         MetricSpec{Name: "acquire_p999", Unit: "us", Better: BetterLower, Label: "acquire p99.9", Kind: KindLatency, Key: true},
	AcquireMax:          MetricSpec{Name: "acquire_max", Unit: "us", Better: BetterLower, Label: "acquire max", Kind: KindLatency},
	AcquireP50CILo:      MetricSpec{Name: "acquire_p50_ci_lo", Unit: "us", Better: BetterLower, Label: "acquire p50, low end of its 95% interval", Kind: KindLatency},
	AcquireP50CIHi:      MetricSpec{Name: "acquire_p50_ci_hi", Unit: "us", Better: BetterLower, Label: "acquire p50, high end of its 95% interval", Kind: KindLatency},
	CycleP50:            MetricSpec{Name: "cycle_p50", Unit: "us", Better: BetterLower, Label: "acquire + release p50", Kind: KindLatency, Key: true},
	CycleP90:            MetricSpec{Name: "cycle_p90", Unit: "us", Better: BetterLower, Label: "acquire + release p90", Kind: KindLatency},
	CycleP99:            MetricSpec{Name: "cycle_p99", Unit: "us", Better: BetterLower, Label: "acquire + release p99", Kind: KindLatency, Key: true},
	CycleP999:           MetricSpec{Name: "cycle_p999", Unit: "us", Better: BetterLower, Label: "acquire + release p99.9", Kind: KindLatency},
	CycleMax:            MetricSpec{Name: "cycle_max", Unit: "us", Better: BetterLower, Label: "acquire + release max", Kind: KindLatency},
	CycleP50CILo:        MetricSpec{Name: "cycle_p50_ci_lo", Unit: "us", Better: BetterLower, Label: "acquire + release p50, low end of its 95% interval", Kind: KindLatency},
	CycleP50CIHi:        MetricSpec{Name: "cycle_p50_ci_hi", Unit: "us", Better: BetterLower, Label: "acquire + release p50, high end of its 95% interval", Kind: KindLatency},
	Failures:            MetricSpec{Name: "failures", Unit: "count", Better: BetterLower, Label: "failed cycles", Kind: KindCount},
	OfferedPerSec:       MetricSpec{Name: "offered_per_sec", Unit: "1/s", Label: "offered rate", Kind: KindRate},
	AchievedPerSec:      MetricSpec{Name: "achieved_per_sec", Unit: "1/s", Better: BetterHigher, Label: "achieved rate", Kind: KindRate},
	TargetPerSec:        MetricSpec{Name: "target_per_sec", Unit: "1/s", Label: "target rate", Kind: KindParameter},
	ClosedLoopMaxPerSec: MetricSpec{Name: "closed_loop_max_per_sec", Unit: "1/s", Label: "closed-loop maximum", Kind: KindParameter},
	Workers:             MetricSpec{Name: "workers", Unit: "count", Label: "workers", Kind: KindParameter},
	Blocks:              MetricSpec{Name: "blocks", Unit: "count", Label: "blocks", Kind: KindParameter},
}

type latencyMetrics struct {
	AcquireP50          MetricSpec
	AcquireP90          MetricSpec
	AcquireP99          MetricSpec
	AcquireP999         MetricSpec
	AcquireMax          MetricSpec
	AcquireP50CILo      MetricSpec
	AcquireP50CIHi      MetricSpec
	CycleP50            MetricSpec
	CycleP90            MetricSpec
	CycleP99            MetricSpec
	CycleP999           MetricSpec
	CycleMax            MetricSpec
	CycleP50CILo        MetricSpec
	CycleP50CIHi        MetricSpec
	Failures            MetricSpec
	OfferedPerSec       MetricSpec
	AchievedPerSec      MetricSpec
	TargetPerSec        MetricSpec
	ClosedLoopMaxPerSec MetricSpec
	Workers             MetricSpec
	Blocks              MetricSpec
}

// List returns the latency scenario's metrics in declaration order.
func (m latencyMetrics) List() []MetricSpec { return specsOf(m) }
