package results

// WorkloadMetrics declares the workload scenario's figures, in the order a
// report shows them.
var WorkloadMetrics = workloadMetrics{
	OfferedPerSec:       MetricSpec{Name: "offered_per_sec", Unit: "1/s", Label: "offered rate", Kind: KindRate, Key: true},
	AchievedPerSec:      MetricSpec{Name: "achieved_per_sec", Unit: "1/s", Better: BetterHigher, Label: "achieved rate", Kind: KindRate, Key: true},
	AcquireP50:          MetricSpec{Name: "acquire_p50", Unit: "us", Better: BetterLower, Label: "acquire p50 from the intended start", Kind: KindLatency, Key: true},
	AcquireP99:          MetricSpec{Name: "acquire_p99", Unit: "us", Better: BetterLower, Label: "acquire p99 from the intended start", Kind: KindLatency, Key: true},
	AcquireP999:         MetricSpec{Name: "acquire_p999", Unit: "us", Better: BetterLower, Label: "acquire p99.9 from the intended start", Kind: KindLatency, Key: true},
	WaitP99:             MetricSpec{Name: "wait_p99", Unit: "ms", Better: BetterLower, Label: "wait p99 on contended keys", Kind: KindLatency, Key: true},
	Failures:            MetricSpec{Name: "failures", Unit: "count", Better: BetterLower, Label: "failed and timed-out acquisitions", Kind: KindCount, Key: true},
	ServerCPUMsPer1k:    MetricSpec{Name: "server_cpu_ms_per_1k", Unit: "ms", Better: BetterLower, Label: "coordinator CPU per 1,000 locks", Kind: KindCPU, Key: true},
	SLOPass:             MetricSpec{Name: "slo_pass", Unit: "bool", Better: BetterHigher, Label: "every threshold held", Kind: KindVerdict, Key: true},
	HandoverP50:         MetricSpec{Name: "handover_p50", Unit: "ms", Better: BetterLower, Label: "handover p50 on contended keys", Kind: KindLatency},
	HandoverP99:         MetricSpec{Name: "handover_p99", Unit: "ms", Better: BetterLower, Label: "handover p99 on contended keys", Kind: KindLatency},
	CommandsPerLock:     MetricSpec{Name: "commands_per_lock", Unit: "count", Better: BetterLower, Label: "coordinator commands per lock", Kind: KindCount},
	ClientCPUMsPer1k:    MetricSpec{Name: "client_cpu_ms_per_1k", Unit: "ms", Better: BetterLower, Label: "client CPU per 1,000 locks", Kind: KindCPU},
	LostLocks:           MetricSpec{Name: "lost_locks", Unit: "count", Better: BetterLower, Label: "locks lost while held", Kind: KindCount},
	ClosedLoopMaxPerSec: MetricSpec{Name: "closed_loop_max_per_sec", Unit: "1/s", Label: "closed-loop maximum (calibration)", Kind: KindParameter},
}

type workloadMetrics struct {
	OfferedPerSec       MetricSpec
	AchievedPerSec      MetricSpec
	AcquireP50          MetricSpec
	AcquireP99          MetricSpec
	AcquireP999         MetricSpec
	WaitP99             MetricSpec
	Failures            MetricSpec
	ServerCPUMsPer1k    MetricSpec
	SLOPass             MetricSpec
	HandoverP50         MetricSpec
	HandoverP99         MetricSpec
	CommandsPerLock     MetricSpec
	ClientCPUMsPer1k    MetricSpec
	LostLocks           MetricSpec
	ClosedLoopMaxPerSec MetricSpec
}

// List returns the workload scenario's metrics in declaration order.
func (m workloadMetrics) List() []MetricSpec { return specsOf(m) }
