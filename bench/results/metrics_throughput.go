package results

// ThroughputMetrics declares the throughput scenario's figures, in the order a
// report shows them.
var ThroughputMetrics = throughputMetrics{
	CyclesPerSec:     MetricSpec{Name: "cycles_per_sec", Unit: "1/s", Better: BetterHigher, Label: "locks per second", Kind: KindRate, Key: true},
	CycleP50:         MetricSpec{Name: "cycle_p50", Unit: "us", Better: BetterLower, Label: "acquire + release p50", Kind: KindLatency},
	CycleP99:         MetricSpec{Name: "cycle_p99", Unit: "us", Better: BetterLower, Label: "acquire + release p99", Kind: KindLatency, Key: true},
	ServerCPUMsPer1k: MetricSpec{Name: "server_cpu_ms_per_1k", Unit: "ms", Better: BetterLower, Label: "coordinator CPU per 1,000 locks", Kind: KindCPU, Key: true},
	ClientCPUMsPer1k: MetricSpec{Name: "client_cpu_ms_per_1k", Unit: "ms", Better: BetterLower, Label: "client CPU per 1,000 locks", Kind: KindCPU},
	Failures:         MetricSpec{Name: "failures", Unit: "count", Better: BetterLower, Label: "failed cycles", Kind: KindCount},
	Workers:          MetricSpec{Name: "workers", Unit: "count", Label: "workers", Kind: KindParameter},
}

type throughputMetrics struct {
	CyclesPerSec     MetricSpec
	CycleP50         MetricSpec
	CycleP99         MetricSpec
	ServerCPUMsPer1k MetricSpec
	ClientCPUMsPer1k MetricSpec
	Failures         MetricSpec
	Workers          MetricSpec
}

// List returns the throughput scenario's metrics in declaration order.
func (m throughputMetrics) List() []MetricSpec { return specsOf(m) }
