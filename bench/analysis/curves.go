package analysis

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench/results"
)

// The figures behind the report's charts: a chart lays them out.

// A MergedHistogram is one contender's histogram of a variant, merged
// over its repetitions.
type MergedHistogram struct {
	Contender string
	Histogram *hdrhistogram.Histogram
	Unit      string
}

// Histograms merges, per contender of a scenario, the histograms named
// name of every repetition of variant; a contender with none, or with
// only empty ones, is left out.
func (run *Run) Histograms(scenario, variant, name string) ([]MergedHistogram, error) {
	var out []MergedHistogram
	for _, c := range run.ContendersIn(scenario) {
		m := MergedHistogram{Contender: c}
		for _, x := range run.raws[rawKey{scenario, c, variant}] {
			for _, h := range x.Histograms {
				if h.Name != name {
					continue
				}
				d, err := h.Decode()
				if err != nil {
					return nil, fmt.Errorf("analysis: %w", err)
				}
				if m.Histogram == nil {
					m.Histogram, m.Unit = d, h.Unit
					continue
				}
				m.Histogram.Merge(d)
			}
		}
		if m.Histogram != nil && m.Histogram.TotalCount() > 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// A ThroughputCurve is one contender's completed cycles per second at
// each worker count on distinct keys (ClosedDistinct), fewest first as
// the run ordered them.
type ThroughputCurve struct {
	Contender string
	Points    []ThroughputPoint
}

// A ThroughputPoint is the cycles per second at one worker count.
type ThroughputPoint struct {
	Workers int
	Row     results.Row
}

// ThroughputCurves reads a curve per contender with a figure on it.
func (run *Run) ThroughputCurves() []ThroughputCurve {
	const s = "throughput"
	var out []ThroughputCurve
	for _, c := range run.ContendersIn(s) {
		tc := ThroughputCurve{Contender: c}
		for _, v := range run.variants(s) {
			p := run.params(s, v)
			if !ClosedDistinct(p) {
				continue
			}
			if x, ok := run.row(s, c, v, results.ThroughputMetrics.CyclesPerSec.Name); ok {
				tc.Points = append(tc.Points, ThroughputPoint{p.Workers, x})
			}
		}
		if len(tc.Points) > 0 {
			out = append(out, tc)
		}
	}
	return out
}
