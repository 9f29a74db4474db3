package report

import (
	"fmt"
	"github.com/monolock/monolock-bench/bench/output/results"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// openLoopQuantiles are the percentiles the open-loop chart draws.
var openLoopQuantiles = []struct{ metric, label string }{
	{"acquire_p50", "p50"}, {"acquire_p99", "p99"}, {"acquire_p999", "p99.9"},
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
			p99, ok1 := f.row("latency", c, v, "acquire_p99")
			off, ok2 := f.row("latency", c, v, "offered_per_sec")
			if ok1 && ok2 {
				text := fmt.Sprintf("%s at %s/s", withUnit(p99.Median, p99.Unit), num(off.Median))
				if vals, _ := f.values("latency", c, v, "acquire_p99"); noisy(vals) {
					text += fmt.Sprintf(" (noise: %s–%s, n=%d)", num(p99.Min), num(p99.Max), len(vals))
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
	p := newPlot("Open loop: acquire "+label+" against offered rate", "offered requests/s (log scale)", "acquire "+label+" from due time (us, log scale)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = readableLogTicks, readableLogTicks
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	lines := 0
	for _, c := range f.scenarioContenders("latency") {
		var xys plotter.XYs
		for _, v := range vs {
			y, ok1 := f.row("latency", c, v, metric)
			x, ok2 := f.row("latency", c, v, "offered_per_sec")
			if !ok1 || !ok2 || x.Median <= 0 || y.Median <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: x.Median, Y: y.Median})
		}
		if len(xys) == 0 {
			continue
		}
		slices.SortFunc(xys, func(a, b plotter.XY) int { return cmpFloat(a.X, b.X) })
		for _, xy := range xys {
			xlo, xhi, ylo, yhi = math.Min(xlo, xy.X), math.Max(xhi, xy.X), math.Min(ylo, xy.Y), math.Max(yhi, xy.Y)
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		l.LineStyle = f.lineStyle(c)
		pts.Color = l.LineStyle.Color
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

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// latencyNoise shows how far the uncontended figures can be trusted: each
// contender's acquire p50 with the interval its per-block medians give,
// and the spread of those medians.
func (f *figures) latencyNoise(d *document) {
	var rows [][]cell
	for _, c := range f.scenarioContenders("latency") {
		p50, ok := f.row("latency", c, "w1", "acquire_p50")
		lo, ok1 := f.row("latency", c, "w1", "acquire_p50_ci_lo")
		hi, ok2 := f.row("latency", c, "w1", "acquire_p50_ci_hi")
		if !ok || !ok1 || !ok2 {
			continue
		}
		blocks := f.blockMedians(c, "w1", "acquire_p50_blocks")
		spread := "–"
		if len(blocks) > 0 {
			spread = fmt.Sprintf("%s–%s (%d blocks)", num(slices.Min(blocks)), num(slices.Max(blocks)), len(blocks))
		}
		rows = append(rows, []cell{{text: c}, {text: num(p50.Median)}, {text: fmt.Sprintf("%s–%s", num(lo.Median), num(hi.Median))},
			{text: fmt.Sprintf("±%.0f%%", 50*(hi.Median-lo.Median)/p50.Median)}, {text: spread}})
	}
	if len(rows) == 0 {
		return
	}
	d.p("Noise of the uncontended figure (w1): the contenders alternate in short blocks within each repetition, so a slow spell of the machine falls on all of them; the interval is that of the median of the per-block medians (distribution-free, ≥95% from six blocks). A floor whose interval lies above its lock's would mean the method, not the locks, made the figure: the claims table checks it.")
	d.add(table{head: []string{"contender", "acquire p50 (us)", "interval of the median (us)", "half-width", "per-block medians (us)"}, rows: rows, labels: 1})
}

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
