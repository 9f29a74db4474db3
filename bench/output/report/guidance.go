package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// situation is one decision a reader makes, and the figure that decides
// it.
type situation struct {
	text                      string
	scenario, variant, metric string
	higherIsBetter            bool
}

func (f *figures) situations() []situation {
	out := []situation{{"Single uncontended acquisitions (acquire p50, 1 worker)", "latency", "w1", results.LatencyMetrics.AcquireP50.Name, false}}
	if v, w := f.mostWorkers(); v != "" {
		out = append(out, situation{fmt.Sprintf("Very many very short locks (hold 0, %d workers on distinct keys, cycles/s)", w), "throughput", v, results.ThroughputMetrics.CyclesPerSec.Name, true})
	}
	for _, v := range f.variantsWhere("throughput", func(p results.VariantParams) bool { return p.Contended }) {
		out = append(out, situation{fmt.Sprintf("Short locks on a small shared key set (%s, cycles/s)", v), "throughput", v, results.ThroughputMetrics.CyclesPerSec.Name, true})
		break
	}
	out = append(out,
		situation{"Hot locks passed from worker to worker (handover after a release, p50)", "handover", "graceful", results.HandoverMetrics.P50.Name, false},
		situation{"Holders that may crash (handover after SIGKILL, p50)", "handover", "crash", results.HandoverMetrics.P50.Name, false},
		situation{"Holders that may freeze (handover after SIGSTOP, p50)", "handover", "freeze", results.HandoverMetrics.P50.Name, false})
	out = append(out,
		situation{"Holders that may stall past the lease and then write (safety, pause: stale writes accepted by a fenced store; locks without tokens have no fenced figure)", "safety", "pause", results.SafetyMetrics.UnsafeWritesFenced.Name, false},
		situation{"Holders whose machine may vanish from the network (safety, host-loss: smallest margin by which the holder learned it lost the lock before the next grant, ms)", "safety", "host-loss", results.SafetyMetrics.LearnFirstMarginMin.Name, true},
		situation{"Servers whose wall clock may jump (safety, clock-jump: stale writes accepted by an unfenced store)", "safety", "clock-jump", results.SafetyMetrics.UnsafeWritesUnfenced.Name, false})
	if v := f.firstVariant("fairness"); v != "" {
		out = append(out,
			situation{fmt.Sprintf("Many clients queueing for one lock (%s, Jain fairness index, 1 = equal shares)", v), "fairness", v, results.FairnessMetrics.JainIndex.Name, true},
			situation{fmt.Sprintf("Load on the coordinator while clients wait (%s, commands/s)", v), "fairness", v, results.FairnessMetrics.ServerOpsPerSec.Name, false})
	}
	out = append(out,
		situation{"The lock service's servers crash and restart (failover restart: longest stretch without a grant)", "failover", "restart", results.FailoverMetrics.UnavailableMs.Name, false},
		situation{"Servers are stopped for maintenance and restarted (failover graceful-restart: longest stretch without a grant)", "failover", "graceful-restart", results.FailoverMetrics.UnavailableMs.Name, false},
		situation{"A minority of the servers is lost and stays down (failover minority-down: longest stretch without a grant)", "failover", "minority-down", results.FailoverMetrics.UnavailableMs.Name, false})
	return out
}

// guidance writes "which lock when": for each situation the locks ranked
// by the figure that decides it, what the claims checked say, then the
// trade-offs the contenders state that a benchmark run does not measure,
// labelled as such.
func (f *figures) guidance(d *document, claims []analysis.Claim) {
	d.h2("Which lock when")
	var measured []string
	for _, s := range f.situations() {
		locks := f.locks(s.scenario)
		if len(locks) < 2 {
			continue
		}
		if line, _ := f.ranked(s.scenario, s.variant, s.metric, locks, s.higherIsBetter); strings.Contains(line, ", then") || strings.Contains(line, " ~ ") {
			measured = append(measured, fmt.Sprintf("%s, best first: %s.", s.text, line))
		}
	}
	measured = append(measured, f.workloadAdvice()...)
	if holds, fails, inc := analysis.TallyClaims(claims); holds+fails+inc > 0 {
		measured = append(measured, fmt.Sprintf("Of the %d claims checked, %d hold, %d fail and %d are inconclusive in this run (Claims checked names those that do not hold).", len(claims), holds, fails, inc))
	}
	if len(measured) > 0 {
		d.p("From this run's numbers (ratios to the best in parentheses):")
		d.add(list{items: measured})
	} else {
		d.p("This run has too few figures for measured advice.")
	}
	var notes []string
	for _, c := range f.contenders {
		for _, n := range f.info[c].Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	d.details("Known trade-offs that this kind of run does not measure", func(d *document) {
		if len(notes) > 0 {
			d.p("From the design of each system, as its contender states them, not from these numbers:")
			d.add(list{items: notes})
		}
	})
}
