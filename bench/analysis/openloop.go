package analysis

import (
	"github.com/monolock/monolock-bench/bench/results"
)

// OpenLoop is the latency scenario's open-loop reading: the variants
// that offer a fixed rate, each acquire percentile against the offered
// rate, and each contender's p99 by rate with its noise judged.
type OpenLoop struct {
	// Variants are the open-loop variants in order of first appearance.
	Variants []string
	// Curves are the acquire p50, p99 and p99.9, in that order.
	Curves []OpenLoopCurve
	// P99 is each contender's acquire p99 by offered rate, contenders in
	// the order of ContendersIn, left out when none was measured.
	P99 []OpenLoopReading
}

// An OpenLoopCurve is one acquire percentile of every contender against
// the offered rate.
type OpenLoopCurve struct {
	// Label names the percentile ("p50").
	Label string
	// Lines are the contenders' lines, one per contender with a point.
	Lines []OpenLoopLine
}

// An OpenLoopLine is one contender's points, in variant order.
type OpenLoopLine struct {
	Contender string
	Points    []OpenLoopPoint
}

// An OpenLoopPoint is a percentile's median at an offered rate (both
// medians across repetitions).
type OpenLoopPoint struct {
	Offered, Value float64
}

// An OpenLoopReading is one contender's acquire p99 at each offered rate.
type OpenLoopReading struct {
	Contender string
	At        []OpenLoopP99
}

// An OpenLoopP99 is the acquire p99 at one offered rate; Noisy says its
// repetitions spread beyond the noise a ranking tolerates, over N of
// them.
type OpenLoopP99 struct {
	P99     results.Row
	Offered float64
	Noisy   bool
	N       int
}

// openLoopQuantiles are the percentiles of the open-loop curves.
var openLoopQuantiles = []struct {
	metric results.MetricSpec
	label  string
}{
	{results.LatencyMetrics.AcquireP50, "p50"},
	{results.LatencyMetrics.AcquireP99, "p99"},
	{results.LatencyMetrics.AcquireP999, "p99.9"},
}

// OpenLoop reads the latency scenario's open-loop variants; zero when
// the run has none.
func (run *Run) OpenLoop() OpenLoop {
	var ol OpenLoop
	for _, v := range run.variants("latency") {
		if run.params("latency", v).Load == results.LoadOpen {
			ol.Variants = append(ol.Variants, v)
		}
	}
	if len(ol.Variants) == 0 {
		return ol
	}
	offered := results.LatencyMetrics.OfferedPerSec.Name
	cs := run.ContendersIn("latency")
	for _, q := range openLoopQuantiles {
		curve := OpenLoopCurve{Label: q.label}
		for _, c := range cs {
			line := OpenLoopLine{Contender: c}
			for _, v := range ol.Variants {
				y, ok1 := run.row("latency", c, v, q.metric.Name)
				x, ok2 := run.row("latency", c, v, offered)
				if ok1 && ok2 {
					line.Points = append(line.Points, OpenLoopPoint{Offered: x.Median, Value: y.Median})
				}
			}
			if len(line.Points) > 0 {
				curve.Lines = append(curve.Lines, line)
			}
		}
		ol.Curves = append(ol.Curves, curve)
	}
	for _, c := range cs {
		rd := OpenLoopReading{Contender: c}
		for _, v := range ol.Variants {
			p99, ok1 := run.row("latency", c, v, results.LatencyMetrics.AcquireP99.Name)
			off, ok2 := run.row("latency", c, v, offered)
			if ok1 && ok2 {
				vals, _ := run.values("latency", c, v, results.LatencyMetrics.AcquireP99.Name)
				rd.At = append(rd.At, OpenLoopP99{P99: p99, Offered: off.Median, Noisy: Noisy(vals), N: len(vals)})
			}
		}
		if len(rd.At) > 0 {
			ol.P99 = append(ol.P99, rd)
		}
	}
	return ol
}

// BlockNoise is how far a contender's uncontended acquire p50 can be
// trusted: the median, the interval its per-block medians give, and
// those medians over every repetition.
type BlockNoise struct {
	Contender   string
	P50, Lo, Hi float64
	Blocks      []float64
}

// UncontendedNoise gives the noise of each contender's acquire p50 with
// one worker, for the contenders that recorded its interval.
func (run *Run) UncontendedNoise() []BlockNoise {
	var out []BlockNoise
	for _, c := range run.ContendersIn("latency") {
		p50, ok := run.row("latency", c, Uncontended, results.LatencyMetrics.AcquireP50.Name)
		lo, ok1 := run.row("latency", c, Uncontended, results.LatencyMetrics.AcquireP50CILo.Name)
		hi, ok2 := run.row("latency", c, Uncontended, results.LatencyMetrics.AcquireP50CIHi.Name)
		if !ok || !ok1 || !ok2 {
			continue
		}
		n := BlockNoise{Contender: c, P50: p50.Median, Lo: lo.Median, Hi: hi.Median}
		for _, x := range run.raws[rawKey{"latency", c, Uncontended}] {
			for _, s := range x.Series {
				if s.Name == "acquire_p50_blocks" {
					n.Blocks = append(n.Blocks, s.Values...)
				}
			}
		}
		out = append(out, n)
	}
	return out
}

// Uncontended is the latency scenario's variant with one worker: one
// client's round trips, no waiting.
const Uncontended = "w1"
