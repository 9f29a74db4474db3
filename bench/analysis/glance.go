package analysis

import "github.com/monolock/monolock-bench/bench/results"

// The figures a reader decides on first: the report's at-a-glance tables
// and the network profiles lay them out.

// OneWorkerLatency is the uncontended latency at one worker, the
// figures a lock on every request's path is chosen by.
type OneWorkerLatency struct {
	AcquireP50, AcquireP99, CycleP50 FigureColumn
	// Failures are the acquires that failed.
	Failures FigureColumn
}

// OneWorker reads the latency scenario's one-worker variant.
func (run *Run) OneWorker() OneWorkerLatency {
	lm := results.LatencyMetrics
	return OneWorkerLatency{
		AcquireP50: run.Column("latency", Uncontended, lm.AcquireP50.Name),
		AcquireP99: run.Column("latency", Uncontended, lm.AcquireP99.Name),
		CycleP50:   run.Column("latency", Uncontended, lm.CycleP50.Name),
		Failures:   run.Column("latency", Uncontended, lm.Failures.Name),
	}
}

// A ThroughputVariant is a variant of the throughput scenario and its
// worker count.
type ThroughputVariant struct {
	Variant string
	Workers int
}

// Contended lists the throughput variants on shared keys, in order of
// first appearance.
func (run *Run) Contended() []ThroughputVariant {
	var out []ThroughputVariant
	for _, v := range run.variants("throughput") {
		if p := run.params("throughput", v); p.Contended {
			out = append(out, ThroughputVariant{v, p.Workers})
		}
	}
	return out
}

// ThroughputWorkers returns the worker count of a throughput variant.
func (run *Run) ThroughputWorkers(variant string) int {
	return run.params("throughput", variant).Workers
}

// HandoverLatency is the waiter's grant after the holder stops: after
// a release, a crash (p50 and the slowest) and a freeze.
type HandoverLatency struct {
	AfterRelease, AfterCrash, SlowestAfterCrash, AfterFreeze FigureColumn
}

// Handover reads the handover scenario's release, crash and freeze
// variants.
func (run *Run) Handover() HandoverLatency {
	hm := results.HandoverMetrics
	return HandoverLatency{
		AfterRelease:      run.Column("handover", "graceful", hm.P50.Name),
		AfterCrash:        run.Column("handover", "crash", hm.P50.Name),
		SlowestAfterCrash: run.Column("handover", "crash", hm.Max.Name),
		AfterFreeze:       run.Column("handover", "freeze", hm.P50.Name),
	}
}
