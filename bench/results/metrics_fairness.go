package results

// FairnessMetrics declares the fairness scenario's figures, in the order a
// report shows them.
var FairnessMetrics = fairnessMetrics{
	JainIndex:           MetricSpec{Name: "jain_index", Unit: "ratio", Better: BetterHigher, Label: "Jain index", Kind: KindRatio, Key: true},
	FIFOInversionsPer1k: MetricSpec{Name: "fifo_inversions_per_1k", Unit: "count", Better: BetterLower, Label: "FIFO inversions per 1,000 grants", Kind: KindCount, Key: true},
	WaitP50:             MetricSpec{Name: "wait_p50", Unit: "ms", Better: BetterLower, Label: "wait p50", Kind: KindLatency},
	WaitP99:             MetricSpec{Name: "wait_p99", Unit: "ms", Better: BetterLower, Label: "wait p99", Kind: KindLatency, Key: true},
	WaitMax:             MetricSpec{Name: "wait_max", Unit: "ms", Better: BetterLower, Label: "longest wait", Kind: KindLatency},
	ServerOpsPerSec:     MetricSpec{Name: "server_ops_per_sec", Unit: "1/s", Better: BetterLower, Label: "coordinator commands/s while clients wait", Kind: KindRate, Key: true},
	ServerOpsPerGrant:   MetricSpec{Name: "server_ops_per_grant", Unit: "count", Better: BetterLower, Label: "coordinator commands per grant", Kind: KindCount},
	AttemptsPerGrant:    MetricSpec{Name: "attempts_per_grant", Unit: "count", Better: BetterLower, Label: "acquire attempts per grant", Kind: KindCount},
	ServerCPUMsPerSec:   MetricSpec{Name: "server_cpu_ms_per_sec", Unit: "ms/s", Better: BetterLower, Label: "coordinator CPU", Kind: KindCPU},
	Utilisation:         MetricSpec{Name: "utilisation", Unit: "ratio", Label: "share of time the lock was held", Kind: KindRatio},
	Grants:              MetricSpec{Name: "grants", Unit: "count", Label: "grants", Kind: KindCount},
}

type fairnessMetrics struct {
	JainIndex           MetricSpec
	FIFOInversionsPer1k MetricSpec
	WaitP50             MetricSpec
	WaitP99             MetricSpec
	WaitMax             MetricSpec
	ServerOpsPerSec     MetricSpec
	ServerOpsPerGrant   MetricSpec
	AttemptsPerGrant    MetricSpec
	ServerCPUMsPerSec   MetricSpec
	Utilisation         MetricSpec
	Grants              MetricSpec
}

// List returns the fairness scenario's metrics in declaration order.
func (m fairnessMetrics) List() []MetricSpec { return specsOf(m) }
