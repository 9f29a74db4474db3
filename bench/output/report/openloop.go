package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// openLoopSection charts each open-loop percentile against the offered
// rate and reads the p99 at every rate, as the analysis gives them.
func (f *figures) openLoopSection(d *document) error {
	ol := f.a.OpenLoop()
	if len(ol.Variants) == 0 {
		return nil
	}
	d.p("Open loop: requests are due at a fixed rate (" + strings.Join(ol.Variants, ", ") + "; the pct variants as a share of each contender's own closed-loop maximum, the others one rate for all), and each latency is counted from the moment the request was due, so waiting behind a slow request counts (coordinated omission corrected, as wrk2 does).")
	for _, curve := range ol.Curves {
		svg, err := f.openLoopChart(curve)
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "latency-open-" + anchor(curve.Label), caption: "Open loop: acquire latency " + curve.Label + " from the due time against the offered rate (both log scale), one point per open-loop variant, medians across repetitions; floors dashed.", svg: svg})
		}
	}
	var parts []string
	for _, rd := range ol.P99 {
		var at []string
		for _, x := range rd.At {
			text := fmt.Sprintf("%s at %s/s", results.Format(x.P99.Median, x.P99.Unit), results.Num(x.Offered))
			if x.Noisy {
				show := results.DisplayFor(x.P99.Unit, x.P99.Median)
				text += fmt.Sprintf(" (noise: %s to %s, n=%d)", show.Format(x.P99.Min), show.Format(x.P99.Max), x.N)
			}
			at = append(at, text)
		}
		parts = append(parts, rd.Contender+" "+strings.Join(at, ", "))
	}
	if len(parts) > 0 {
		d.p("Reading (open loop, acquire p99 by offered rate): " + strings.Join(parts, "; ") + ".")
	}
	return nil
}

// openLoopChart draws one percentile against the offered rate, a line per
// contender through its open-loop variants.
func (f *figures) openLoopChart(curve analysis.OpenLoopCurve) ([]byte, error) {
	var all []float64
	for _, l := range curve.Lines {
		for _, pt := range l.Points {
			all = append(all, pt.Value)
		}
	}
	show := results.DisplayFor(p50Unit, all...)
	p := newPlot("Open loop: acquire "+curve.Label+" against offered rate", "offered requests/s (log scale)", "acquire "+curve.Label+" from due time ("+show.Unit+", log scale)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = readableLogTicks, readableLogTicks
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	lines := 0
	for _, line := range curve.Lines {
		var xys plotter.XYs
		for _, pt := range line.Points {
			// a log scale has no place for zero
			if pt.Offered <= 0 || pt.Value <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.Offered, Y: show.Value(pt.Value)})
		}
		if len(xys) == 0 {
			continue
		}
		slices.SortFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		for _, xy := range xys {
			xlo, xhi, ylo, yhi = math.Min(xlo, xy.X), math.Max(xhi, xy.X), math.Min(ylo, xy.Y), math.Max(yhi, xy.Y)
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		l.LineStyle = f.lineStyle(line.Contender)
		pts.GlyphStyle = f.glyphStyle(line.Contender)
		p.Add(l, pts)
		p.Legend.Add(line.Contender, l, pts)
		lines++
	}
	if lines == 0 {
		return nil, nil
	}
	logRange(&p.X, xlo/1.5, xhi*1.5)
	logRange(&p.Y, ylo/1.5, yhi*1.5)
	return svgOf(p)
}

// latencyNoise shows how far the uncontended figures can be trusted: each
// contender's acquire p50 with the interval its per-block medians give,
// and the spread of those medians.
func (f *figures) latencyNoise(d *document) {
	ns := f.a.UncontendedNoise()
	if len(ns) == 0 {
		return
	}
	var all []float64
	for _, n := range ns {
		all = append(append(all, n.P50, n.Lo, n.Hi), n.Blocks...)
	}
	show := results.DisplayFor(p50Unit, all...)
	var rows [][]cell
	for _, n := range ns {
		spread := "–"
		if len(n.Blocks) > 0 {
			spread = fmt.Sprintf("%s–%s (%d blocks)", show.Num(slices.Min(n.Blocks)), show.Num(slices.Max(n.Blocks)), len(n.Blocks))
		}
		rows = append(rows, []cell{{text: n.Contender}, {text: show.Num(n.P50)}, {text: fmt.Sprintf("%s–%s", show.Num(n.Lo), show.Num(n.Hi))},
			{text: fmt.Sprintf("±%.0f%%", 50*(n.Hi-n.Lo)/n.P50)}, {text: spread}})
	}
	u := " (" + show.Unit + ")"
	d.details("Noise of the uncontended figure (w1)", func(d *document) {
		d.p("The contenders alternate in short blocks within each repetition, so a slow spell of the machine falls on all of them; the interval is that of the median of the per-block medians (distribution-free, ≥95% from six blocks). A floor whose interval lies above its lock's would mean the method, not the locks, made the figure: the claims table checks it.")
		d.add(table{head: []string{"contender", "acquire p50" + u, "interval of the median" + u, "half-width", "per-block medians" + u}, rows: rows, labels: 1})
	})
}

// p50Unit is the stored unit of the latency scenario's acquire figures.
const p50Unit = "us"
