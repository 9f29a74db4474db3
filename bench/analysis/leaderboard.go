package analysis

import (
	"fmt"
	"slices"

	"github.com/monolock/monolock-bench/bench/results"
)

// A Leaderboard is one situation of "which lock when": a decision a
// reader makes, and the locks ranked by the figure that decides it.
type Leaderboard struct {
	// Situation is the decision in words, with the figure that decides
	// it ("Holders that may crash (handover after SIGKILL, p50)").
	Situation string
	// Entries are the locks ranked by that figure (RankFigure), best
	// first, failed ones last.
	Entries []Entry
}

// situation is one decision a reader makes, and the figure that decides
// it; which way is better is the figure's declaration.
type situation struct {
	text              string
	scenario, variant string
	metric            results.MetricSpec
}

// situations lists the decisions this run has figures for.
func (run *Run) situations() []situation {
	out := []situation{{"Single uncontended acquisitions (acquire p50, 1 worker)", "latency", Uncontended, results.LatencyMetrics.AcquireP50}}
	if v, w := run.MostWorkers(); v != "" {
		out = append(out, situation{fmt.Sprintf("Very many very short locks (hold 0, %d workers on distinct keys, cycles/s)", w), "throughput", v, results.ThroughputMetrics.CyclesPerSec})
	}
	if i := slices.IndexFunc(run.variants("throughput"), func(v string) bool { return run.params("throughput", v).Contended }); i >= 0 {
		v := run.variants("throughput")[i]
		out = append(out, situation{fmt.Sprintf("Short locks on a small shared key set (%s, cycles/s)", v), "throughput", v, results.ThroughputMetrics.CyclesPerSec})
	}
	out = append(out,
		situation{"Hot locks passed from worker to worker (handover after a release, p50)", "handover", "graceful", results.HandoverMetrics.P50},
		situation{"Holders that may crash (handover after SIGKILL, p50)", "handover", "crash", results.HandoverMetrics.P50},
		situation{"Holders that may freeze (handover after SIGSTOP, p50)", "handover", "freeze", results.HandoverMetrics.P50},
		situation{"Holders that may stall past the lease and then write (safety, pause: stale writes accepted by a fenced store; locks without tokens have no fenced figure)", "safety", "pause", results.SafetyMetrics.UnsafeWritesFenced},
		situation{"Holders whose machine may vanish from the network (safety, host-loss: smallest margin by which the holder learned it lost the lock before the next grant, ms)", "safety", "host-loss", results.SafetyMetrics.LearnFirstMarginMin},
		situation{"Servers whose wall clock may jump (safety, clock-jump: stale writes accepted by an unfenced store)", "safety", "clock-jump", results.SafetyMetrics.UnsafeWritesUnfenced})
	if v := run.FirstLockVariant("fairness"); v != "" {
		out = append(out,
			situation{fmt.Sprintf("Many clients queueing for one lock (%s, Jain fairness index, 1 = equal shares)", v), "fairness", v, results.FairnessMetrics.JainIndex},
			situation{fmt.Sprintf("Load on the coordinator while clients wait (%s, commands/s)", v), "fairness", v, results.FairnessMetrics.ServerOpsPerSec})
	}
	return append(out,
		situation{"The lock service's servers crash and restart (failover restart: longest stretch without a grant)", "failover", "restart", results.FailoverMetrics.UnavailableMs},
		situation{"Servers are stopped for maintenance and restarted (failover graceful-restart: longest stretch without a grant)", "failover", "graceful-restart", results.FailoverMetrics.UnavailableMs},
		situation{"A minority of the servers is lost and stays down (failover minority-down: longest stretch without a grant)", "failover", "minority-down", results.FailoverMetrics.UnavailableMs})
}

// Leaderboards ranks the locks for each situation this run decides: one
// whose scenario ran at least two locks, and whose ranking places two of
// them (told apart, tied, or one ranked before a failed one); a ranking
// of one lock and noise tells a reader nothing.
func (run *Run) Leaderboards() []Leaderboard {
	var out []Leaderboard
	for _, s := range run.situations() {
		locks := run.locksIn(s.scenario)
		if len(locks) < 2 {
			continue
		}
		es := run.RankFigure(s.scenario, s.variant, s.metric.Name, locks, s.metric.Better == results.BetterHigher)
		if placed := slices.DeleteFunc(slices.Clone(es), func(e Entry) bool { return e.Noise }); len(placed) >= 2 {
			out = append(out, Leaderboard{Situation: s.text, Entries: es})
		}
	}
	return out
}

// ClosedDistinct accepts the closed-loop variants on distinct keys that
// have a worker count: the throughput curve.
func ClosedDistinct(p results.VariantParams) bool {
	return p.Load == results.LoadClosed && !p.Contended && p.Workers > 0
}

// MostWorkers returns the distinct-keys throughput variant with the most
// workers that any lock (not a floor) ran, and its worker count.
func (run *Run) MostWorkers() (string, int) {
	best, bestW := "", 0
	for _, v := range run.variants("throughput") {
		p := run.params("throughput", v)
		if !ClosedDistinct(p) || p.Workers <= bestW {
			continue
		}
		if slices.ContainsFunc(run.r.Summary, func(x results.Row) bool {
			return x.Scenario == "throughput" && x.Variant == v && x.Metric == results.ThroughputMetrics.CyclesPerSec.Name && slices.Contains(run.locks, x.Contender)
		}) {
			best, bestW = v, p.Workers
		}
	}
	return best, bestW
}

// FirstLockVariant returns the first variant of a scenario that a lock
// (not a floor) has figures in.
func (run *Run) FirstLockVariant(scenario string) string {
	for _, v := range run.variants(scenario) {
		if slices.ContainsFunc(run.r.Summary, func(x results.Row) bool {
			return x.Scenario == scenario && x.Variant == v && !run.info[x.Contender].Floor
		}) {
			return v
		}
	}
	return ""
}
