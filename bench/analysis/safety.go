package analysis

import (
	"math"

	"github.com/monolock/monolock-bench/bench/results"
)

// A Quoted figure is one contender's figure as a reading lists it: its
// summary row, or why it failed (see FailedFigure).
type Quoted struct {
	Contender string
	Row       results.Row
	// Failed, when set, replaces the figure ("did not grant").
	Failed string
}

// Quote gives the figure of one metric in a variant of each of the
// contenders that has it or whose figure failed, in their order.
func (run *Run) Quote(scenario, variant, metric string, contenders []string) []Quoted {
	var out []Quoted
	for _, c := range contenders {
		x, ok := run.row(scenario, c, variant, metric)
		if why := run.FailedFigure(scenario, c, variant, metric, ok); why != "" {
			out = append(out, Quoted{Contender: c, Failed: why})
		} else if ok {
			out = append(out, Quoted{Contender: c, Row: x})
		}
	}
	return out
}

// A SafetyReading is one variant of the safety scenario: what reached
// the unfenced and the fenced store, what the fenced store refused, the
// grants while the old holder still believed it held the lock, and the
// smallest learn-first margin ranked, largest first.
type SafetyReading struct {
	Variant                                  string
	Unfenced, Fenced, Rejected, DoubleGrants []Quoted
	Margins                                  []Entry
	// Stale is each lock's stale writes, by contender; nil when the
	// variant does not measure them. MarginMeasured says whether it
	// measures the learn-first margin.
	Stale          map[string]StaleWrites
	MarginMeasured bool
}

// StaleWrites are a lock's stale writes accepted by the unfenced and
// the fenced store (nil when not measured), or why the figure failed.
type StaleWrites struct {
	Unfenced, Fenced *results.Row
	Failed           string
}

// SafetyReadings reads every variant of the safety scenario in order of
// first appearance, over its locks.
func (run *Run) SafetyReadings() []SafetyReading {
	const s = "safety"
	sm := results.SafetyMetrics
	locks := run.locksIn(s)
	var out []SafetyReading
	for _, v := range run.variants(s) {
		rd := SafetyReading{
			Variant:        v,
			Unfenced:       run.Quote(s, v, sm.UnsafeWritesUnfenced.Name, locks),
			Fenced:         run.Quote(s, v, sm.UnsafeWritesFenced.Name, locks),
			Rejected:       run.Quote(s, v, sm.FencedRejections.Name, locks),
			DoubleGrants:   run.Quote(s, v, sm.DoubleGrants.Name, locks),
			Margins:        run.RankFigure(s, v, sm.LearnFirstMarginMin.Name, locks, true),
			MarginMeasured: run.measures(s, v, sm.LearnFirstMarginMin.Name),
		}
		if run.measures(s, v, sm.UnsafeWritesUnfenced.Name) {
			rd.Stale = map[string]StaleWrites{}
			for _, c := range locks {
				u, uok := run.row(s, c, v, sm.UnsafeWritesUnfenced.Name)
				if why := run.FailedFigure(s, c, v, sm.UnsafeWritesUnfenced.Name, uok); why != "" {
					rd.Stale[c] = StaleWrites{Failed: why}
					continue
				}
				if !uok {
					continue
				}
				sw := StaleWrites{Unfenced: &u}
				if x, ok := run.row(s, c, v, sm.UnsafeWritesFenced.Name); ok {
					sw.Fenced = &x
				}
				rd.Stale[c] = sw
			}
		}
		out = append(out, rd)
	}
	return out
}

// hostLoss is the safety variant in which the holder's host is lost.
const hostLoss = "host-loss"

// ProxyOverhead quotes what the fault proxy adds to a round trip in the
// host-loss variant, per lock.
func (run *Run) ProxyOverhead() []Quoted {
	return run.Quote("safety", hostLoss, results.SafetyMetrics.ProxyOverheadP50.Name, run.locksIn("safety"))
}

// A MarginBar is a lock's host-loss learn-first margin: the p50 of the
// trials and, when measured, the smallest (medians across repetitions).
type MarginBar struct {
	Contender string
	P50       float64
	Min       float64
	HasMin    bool
}

// HostLossMargins gives the margin of each lock that measured its p50
// in the host-loss variant, in the order of locksIn.
func (run *Run) HostLossMargins() []MarginBar {
	var out []MarginBar
	for _, c := range run.locksIn("safety") {
		p50, ok := run.row("safety", c, hostLoss, results.SafetyMetrics.LearnFirstMarginP50.Name)
		if !ok {
			continue
		}
		b := MarginBar{Contender: c, P50: p50.Median}
		if m, ok := run.row("safety", c, hostLoss, results.SafetyMetrics.LearnFirstMarginMin.Name); ok && !math.IsNaN(m.Median) {
			b.Min, b.HasMin = m.Median, true
		}
		out = append(out, b)
	}
	return out
}
