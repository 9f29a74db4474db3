package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// openLoopQuantiles are the percentiles the open-loop chart draws.
var openLoopQuantiles = []struct{ metric, label string }{
	{results.LatencyMetrics.AcquireP50.Name, "p50"},
	{results.LatencyMetrics.AcquireP99.Name, "p99"},
	{results.LatencyMetrics.AcquireP999.Name, "p99.9"},
}

// openLoopSection charts each open-loop percentile against the offered
// rate and reads the p99 at every rate.
func (f *figures) openLoopSection(d *document) error {
	vs := f.variantsWhere("latency", func(p results.VariantParams) bool { return p.Load == results.LoadOpen })
	if len(vs) == 0 {
		return nil
	}
	d.p("Open loop: requests are due at a fixed rate (" + strings.Join(vs, ", ") + "; the pct variants as a share of each contender's own closed-loop maximum, the others one rate for all), and each latency is counted from the moment the request was due, so waiting behind a slow request counts (coordinated omission corrected, as wrk2 does).")
	for _, q := range openLoopQuantiles {
		svg, err := f.openLoopChart(vs, q.metric, q.label)
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "latency-open-" + anchor(q.label), caption: "Open loop: acquire latency " + q.label + " from the due time against the offered rate (both log scale), one point per open-loop variant, medians across repetitions; floors dashed.", svg: svg})
		}
	}
	var parts []string
	for _, c := range f.scenarioContenders("latency") {
		var at []string
		for _, v := range vs {
			p99, ok1 := f.row("latency", c, v, results.LatencyMetrics.AcquireP99.Name)
			off, ok2 := f.row("latency", c, v, results.LatencyMetrics.OfferedPerSec.Name)
			if ok1 && ok2 {
				text := fmt.Sprintf("%s at %s/s", results.Format(p99.Median, p99.Unit), results.Num(off.Median))
				if vals, _ := f.values("latency", c, v, results.LatencyMetrics.AcquireP99.Name); noisy(vals) {
					show := results.DisplayFor(p99.Unit, p99.Median)
					text += fmt.Sprintf(" (noise: %s to %s, n=%d)", show.Format(p99.Min), show.Format(p99.Max), len(vals))
				}
				at = append(at, text)
			}
		}
		if len(at) > 0 {
			parts = append(parts, c+" "+strings.Join(at, ", "))
		}
	}
	if len(parts) > 0 {
		d.p("Reading (open loop, acquire p99 by offered rate): " + strings.Join(parts, "; ") + ".")
	}
	return nil
}

// openLoopChart draws one percentile against the offered rate, a line per
// contender through its open-loop variants.
func (f *figures) openLoopChart(vs []string, metric, label string) ([]byte, error) {
	var all []float64
	for _, c := range f.scenarioContenders("latency") {
		for _, v := range vs {
			if y, ok := f.row("latency", c, v, metric); ok {
				all = append(all, y.Median)
			}
		}
	}
	show := results.DisplayFor(p50Unit, all...)
	p := newPlot("Open loop: acquire "+label+" against offered rate", "offered requests/s (log scale)", "acquire "+label+" from due time ("+show.Unit+", log scale)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = readableLogTicks, readableLogTicks
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	lines := 0
	for _, c := range f.scenarioContenders("latency") {
		var xys plotter.XYs
		for _, v := range vs {
			y, ok1 := f.row("latency", c, v, metric)
			x, ok2 := f.row("latency", c, v, results.LatencyMetrics.OfferedPerSec.Name)
			if !ok1 || !ok2 || x.Median <= 0 || y.Median <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: x.Median, Y: show.Value(y.Median)})
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
		l.LineStyle = f.lineStyle(c)
		pts.GlyphStyle = f.glyphStyle(c)
		p.Add(l, pts)
		p.Legend.Add(c, l, pts)
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
	type noise struct {
		c           string
		p50, lo, hi float64
		blocks      []float64
	}
	var ns []noise
	var all []float64
	for _, c := range f.scenarioContenders("latency") {
		p50, ok := f.row("latency", c, "w1", results.LatencyMetrics.AcquireP50.Name)
		lo, ok1 := f.row("latency", c, "w1", results.LatencyMetrics.AcquireP50CILo.Name)
		hi, ok2 := f.row("latency", c, "w1", results.LatencyMetrics.AcquireP50CIHi.Name)
		if !ok || !ok1 || !ok2 {
			continue
		}
		n := noise{c, p50.Median, lo.Median, hi.Median, f.blockMedians(c, "w1", "acquire_p50_blocks")}
		ns = append(ns, n)
		all = append(append(all, n.p50, n.lo, n.hi), n.blocks...)
	}
	if len(ns) == 0 {
		return
	}
	show := results.DisplayFor(p50Unit, all...)
	var rows [][]cell
	for _, n := range ns {
		spread := "–"
		if len(n.blocks) > 0 {
			spread = fmt.Sprintf("%s–%s (%d blocks)", show.Num(slices.Min(n.blocks)), show.Num(slices.Max(n.blocks)), len(n.blocks))
		}
		rows = append(rows, []cell{{text: n.c}, {text: show.Num(n.p50)}, {text: fmt.Sprintf("%s–%s", show.Num(n.lo), show.Num(n.hi))},
			{text: fmt.Sprintf("±%.0f%%", 50*(n.hi-n.lo)/n.p50)}, {text: spread}})
	}
	u := " (" + show.Unit + ")"
	d.details("Noise of the uncontended figure (w1)", func(d *document) {
		d.p("The contenders alternate in short blocks within each repetition, so a slow spell of the machine falls on all of them; the interval is that of the median of the per-block medians (distribution-free, ≥95% from six blocks). A floor whose interval lies above its lock's would mean the method, not the locks, made the figure: the claims table checks it.")
		d.add(table{head: []string{"contender", "acquire p50" + u, "interval of the median" + u, "half-width", "per-block medians" + u}, rows: rows, labels: 1})
	})
}

// p50Unit is the stored unit of the latency scenario's acquire figures.
const p50Unit = "us"

// blockMedians collects a per-block series of a contender over every
// repetition.
func (f *figures) blockMedians(contender, variant, series string) []float64 {
	var out []float64
	for _, x := range f.raws("latency", contender, variant) {
		for _, s := range x.Series {
			if s.Name == series {
				out = append(out, s.Values...)
			}
		}
	}
	return out
}
