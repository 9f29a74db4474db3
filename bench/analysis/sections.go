package analysis

import (
	"slices"

	"github.com/monolock/monolock-bench/bench/results"
)

// A LatencyReading is one closed-loop variant of the latency scenario:
// its locks' acquire p50 ranked, fastest first (empty when no lock has
// the figure).
type LatencyReading struct {
	Variant string
	Ranking []Entry
}

// LatencyReadings reads the closed-loop variants of the latency
// scenario in order of first appearance; the open-loop ones are
// OpenLoop's.
func (run *Run) LatencyReadings() []LatencyReading {
	var out []LatencyReading
	for _, v := range run.variants("latency") {
		if run.params("latency", v).Load == results.LoadOpen {
			continue
		}
		out = append(out, LatencyReading{Variant: v, Ranking: run.RankFigure("latency", v, results.LatencyMetrics.AcquireP50.Name, run.locksIn("latency"), false)})
	}
	return out
}

// ThroughputReading is the throughput scenario at its most workers
// (MostWorkers): the locks' cycles per second ranked, most first.
type ThroughputReading struct {
	Variant string
	Workers int
	Ranking []Entry
}

// ThroughputAtMostWorkers ranks the throughput at MostWorkers; zero
// when no lock ran it.
func (run *Run) ThroughputAtMostWorkers() ThroughputReading {
	v, w := run.MostWorkers()
	if v == "" {
		return ThroughputReading{}
	}
	return ThroughputReading{Variant: v, Workers: w, Ranking: run.RankFigure("throughput", v, results.ThroughputMetrics.CyclesPerSec.Name, run.locksIn("throughput"), true)}
}

// A Peak is a contender's most cycles per second over the distinct-key
// throughput variants, and the workers it had there.
type Peak struct {
	Contender string
	PerSec    float64
	Workers   int
}

// ThroughputPeaks gives each contender's peak, contenders in the order
// of ContendersIn, left out when none has a positive figure.
func (run *Run) ThroughputPeaks() []Peak {
	var out []Peak
	for _, c := range run.ContendersIn("throughput") {
		p := Peak{Contender: c}
		for _, v := range run.variants("throughput") {
			params := run.params("throughput", v)
			if !ClosedDistinct(params) {
				continue
			}
			if x, ok := run.row("throughput", c, v, results.ThroughputMetrics.CyclesPerSec.Name); ok && x.Median > p.PerSec {
				p.PerSec, p.Workers = x.Median, params.Workers
			}
		}
		if p.Workers > 0 {
			out = append(out, p)
		}
	}
	return out
}

// HandoverFailures are a lock's failed handover trials: the modes in
// which any repetition had one, with the median count per repetition.
type HandoverFailures struct {
	Contender string
	Modes     []ModeFailures
}

// ModeFailures is the median count of failed trials in one handover mode.
type ModeFailures struct {
	Mode   string
	Median float64
}

// HandoverFailed lists the locks with failed handover trials, in the
// order of locksIn.
func (run *Run) HandoverFailed() []HandoverFailures {
	var out []HandoverFailures
	for _, c := range run.locksIn("handover") {
		hf := HandoverFailures{Contender: c}
		for _, mode := range run.variants("handover") {
			if x, ok := run.row("handover", c, mode, results.HandoverMetrics.Failed.Name); ok && x.Max > 0 {
				hf.Modes = append(hf.Modes, ModeFailures{Mode: mode, Median: x.Median})
			}
		}
		if len(hf.Modes) > 0 {
			out = append(out, hf)
		}
	}
	return out
}

// FairnessFigures are a lock's figures in one fairness variant; a nil
// one was not measured.
type FairnessFigures struct {
	Contender                                           string
	JainIndex, Inversions, WaitP99, Utilisation, Server *results.Row
}

// FairnessReading gives every lock's figures in a fairness variant, in
// the order of locksIn.
func (run *Run) FairnessReading(variant string) []FairnessFigures {
	var out []FairnessFigures
	for _, c := range run.locksIn("fairness") {
		get := func(m results.MetricSpec) *results.Row {
			if x, ok := run.row("fairness", c, variant, m.Name); ok {
				return &x
			}
			return nil
		}
		fm := results.FairnessMetrics
		out = append(out, FairnessFigures{Contender: c, JainIndex: get(fm.JainIndex), Inversions: get(fm.FIFOInversionsPer1k),
			WaitP99: get(fm.WaitP99), Utilisation: get(fm.Utilisation), Server: get(fm.ServerOpsPerSec)})
	}
	return out
}

// ClientGrants are the grants each client of a fairness variant got,
// summed over the repetitions.
type ClientGrants struct {
	// Clients are the client IDs in order of first appearance.
	Clients []string
	// Grants are by contender, then client; Totals by contender.
	Grants map[string]map[string]int64
	Totals map[string]int64
}

// FairnessGrants sums the grants of each client of a fairness variant,
// over every contender with figures in the scenario.
func (run *Run) FairnessGrants(variant string) ClientGrants {
	g := ClientGrants{Grants: map[string]map[string]int64{}, Totals: map[string]int64{}}
	for _, c := range run.ContendersIn("fairness") {
		for _, raw := range run.raws[rawKey{"fairness", c, variant}] {
			for _, cl := range raw.Clients {
				n, ok := cl.Counts["grants"]
				if !ok {
					continue
				}
				if !slices.Contains(g.Clients, cl.ID) {
					g.Clients = append(g.Clients, cl.ID)
				}
				if g.Grants[c] == nil {
					g.Grants[c] = map[string]int64{}
				}
				g.Grants[c][cl.ID] += n
				g.Totals[c] += n
			}
		}
	}
	return g
}
