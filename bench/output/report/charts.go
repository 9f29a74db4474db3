package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// Chart size: wide enough for a legend beside the lines, small enough for
// a phone after CSS scaling.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 3.8 * vg.Inch
)

// logRange sets a log axis to span lo..hi (both positive) with room
// around them; gonum's own padding of an empty or one-value range would
// reach zero, which a log scale cannot show.
func logRange(a *plot.Axis, lo, hi float64) {
	lo, hi = math.Max(lo, 1e-3), math.Max(hi, 1e-3)
	if lo == hi {
		lo, hi = lo/2, hi*2
	}
	a.Min, a.Max = lo, hi
}

// sans is the chart font: its metrics come with gonum/plot, so the layout
// does not depend on the fonts of the machine that renders.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// legendWidth is the column right of the plot area that holds the legend,
// so that it never covers data.
const legendWidth = 2.1 * vg.Inch

// newPlot returns a plot with the house layout.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, ts := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		ts.Font.Typeface, ts.Font.Variant = sans.Typeface, sans.Variant
	}
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.TextStyle.Font.Size = vg.Points(10)
	p.Y.Label.TextStyle.Font.Size = vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.ThumbnailWidth = vg.Points(18)
	p.Legend.Padding = vg.Points(2)
	p.Add(plotter.NewGrid())
	return p
}

// readableTicks labels a linear axis with the report's number format
// ("25000", not "25000.00"; "0.5", not "0.50").
var readableTicks = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = results.Tick(ticks[i].Value)
		}
	}
	return ticks
})

// readableLogTicks labels a log axis as plain numbers ("100000", not
// "1e+05"): the decades, and on an axis of at most three decades also 2 and
// 5 times each, so that a label stands within a factor 2.5 of every point.
var readableLogTicks = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	dense := lo > 0 && hi/lo <= 1000
	labelled := map[float64]bool{}
	for _, t := range ticks {
		if t.Label != "" {
			labelled[t.Value] = true
		}
	}
	for i := range ticks {
		v := ticks[i].Value
		if ticks[i].Label != "" {
			ticks[i].Label = results.Tick(v)
			continue
		}
		decade := math.Pow(10, math.Floor(math.Log10(v)+1e-9))
		if dense && !labelled[v] && (nearly(v, 2*decade) || nearly(v, 5*decade)) {
			ticks[i].Label, labelled[v] = results.Tick(v), true
		}
	}
	return ticks
})

// firstChart adds the first of a section's charts to d and the others to
// its appendix under summary: report.md keeps one chart per section within
// its size, report.html shows the others folded.
func firstChart(d *document, summary string, charts []chart) {
	if len(charts) == 0 {
		return
	}
	d.add(charts[0])
	d.details(summary, func(d *document) {
		for _, c := range charts[1:] {
			d.add(c)
		}
	})
}

// axisUnit names a stored unit on an axis as a reader reads it: "µs" for
// "us".
func axisUnit(stored string) string { return results.DisplayFor(stored).Unit }

// nearly reports whether a and b agree to nine digits.
func nearly(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }

// svgOf renders p as a deterministic SVG document, its legend in a column
// on the right. vgsvg writes no ids, no timestamps and (by default) no
// embedded fonts; the font family it names gets generic fallbacks so that
// a browser without Liberation fonts keeps the layout close.
func svgOf(p *plot.Plot) ([]byte, error) {
	c := vgsvg.New(chartWidth, chartHeight)
	dc := draw.New(c)
	legend := p.Legend
	p.Legend = plot.NewLegend() // drawn beside the plot, not over it
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	legend.Draw(draw.Crop(dc, chartWidth-legendWidth+vg.Points(6), 0, 0, -vg.Points(24)))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: writing SVG: %w", err)
	}
	out := strings.ReplaceAll(b.String(), "font-family:Liberation Serif;", "font-family:'Liberation Serif','Times New Roman',Times,serif;")
	out = strings.ReplaceAll(out, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	return []byte(out), nil
}

// percentileX maps a quantile q in [0,1) to the x position of a percentile
// plot: log10(1/(1-q)), so that 90%, 99%, 99.9% are evenly spaced.
func percentileX(q float64) float64 { return math.Log10(1 / (1 - q)) }

// percentileTicks labels the x axis of a percentile plot up to the given
// number of nines.
func percentileTicks(nines int) plot.ConstantTicks {
	ticks := plot.ConstantTicks{{Value: 0}, {Value: percentileX(0.5), Label: "50%"}}
	label := "90"
	for n := 1; n <= nines; n++ {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: label + "%"})
		if n == 1 {
			label = "99"
		} else {
			label += "9"
		}
		if n == 2 {
			label = "99.9"
		}
	}
	return ticks
}

// nanoseconds per time unit of the histograms and charts.
var nanoseconds = map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}

// percentileLine returns the points (percentile position, value in out) of
// a latency histogram recorded in unit: the HdrHistogram percentile
// distribution, up to the last quantile the sample size supports.
func percentileLine(h *hdrhistogram.Histogram, unit, out string) (plotter.XYs, int) {
	scale := 1.0
	if in, ok := nanoseconds[unit]; ok {
		scale = in / nanoseconds[out]
	}
	n := h.TotalCount()
	nines := 0
	for c := int64(10); c <= n && nines < 5; c *= 10 {
		nines++
	}
	limit := float64(nines)
	var xys plotter.XYs
	for step := 0; ; step++ {
		x := float64(step) / 20
		if x > limit {
			break
		}
		q := 1 - math.Pow(10, -x)
		v := float64(h.ValueAtQuantile(q*100)) * scale
		xys = append(xys, plotter.XY{X: x, Y: math.Max(v, 1e-3)})
	}
	return xys, nines
}

// percentileChart draws one line per contender from its merged histogram
// named hist in the given scenario variant; nil when no contender has one.
func (f *figures) percentileChart(title, scenario, variant, hist, what, out string) ([]byte, error) {
	p := newPlot(title, "percentile (log of 1/(1−q))", fmt.Sprintf("%s (%s, log scale)", what, axisUnit(out)))
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = readableLogTicks
	maxNines := 0
	lines := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	merged, err := f.a.Histograms(scenario, variant, hist)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	for _, m := range merged {
		c, h := m.Contender, m.Histogram
		xys, nines := percentileLine(h, m.Unit, out)
		for _, p := range xys {
			lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		l.LineStyle = f.lineStyle(c)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (n=%d)", c, h.TotalCount()), l)
		maxNines = max(maxNines, nines)
		lines++
	}
	if lines == 0 {
		return nil, nil
	}
	p.X.Tick.Marker = percentileTicks(maxNines)
	p.X.Min, p.X.Max = 0, float64(max(maxNines, 1))
	logRange(&p.Y, lo, hi)
	return svgOf(p)
}

// throughputChart draws completed cycles per second against the number of
// workers on distinct keys, one line per contender (floors dashed), with
// the min–max spread across repetitions as error bars.
func (f *figures) throughputChart() ([]byte, error) {
	p := newPlot("Short locks on distinct keys: throughput against workers", "workers (log scale)", "completed locks/s (acquire + release)")
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	lines := 0
	for _, tc := range f.a.ThroughputCurves() {
		c := tc.Contender
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, pt := range tc.Points {
			w, x := pt.Workers, pt.Row
			xys = append(xys, plotter.XY{X: float64(w), Y: x.Median})
			errs = append(errs, struct{ Low, High float64 }{x.Median - x.Min, x.Max - x.Median})
			if !hasTick(ticks, float64(w)) {
				ticks = append(ticks, plot.Tick{Value: float64(w), Label: strconv.Itoa(w)})
			}
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		l.LineStyle = f.lineStyle(c)
		pts.GlyphStyle = f.glyphStyle(c)
		eb := &plotter.YErrorBars{XYs: xys, YErrors: errs, LineStyle: draw.LineStyle{Color: l.LineStyle.Color, Width: vg.Points(1)}, CapWidth: vg.Points(5)}
		p.Add(l, pts, eb)
		p.Legend.Add(c, l, pts)
		lines++
	}
	if lines == 0 {
		return nil, nil
	}
	p.X.Tick.Marker = ticks
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, t := range ticks {
		lo, hi = math.Min(lo, t.Value), math.Max(hi, t.Value)
	}
	logRange(&p.X, lo, hi)
	p.Y.Min = 0
	p.Y.Tick.Marker = readableTicks
	return svgOf(p)
}

func hasTick(ts plot.ConstantTicks, v float64) bool {
	for _, t := range ts {
		if t.Value == v {
			return true
		}
	}
	return false
}

// handoverChart draws, per handover mode, one bar per contender: the
// median of the per-repetition p50, with a whisker to the median max.
func (f *figures) handoverChart() ([]byte, error) {
	modes := f.a.Variants("handover")
	contenders := f.a.ContendersIn("handover")
	if len(modes) == 0 || len(contenders) == 0 {
		return nil, nil
	}
	p := newPlot("Handover: waiter's grant after the holder stops", "mode (bar: p50, whisker: max)", "handover (ms, log scale)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = readableLogTicks
	var ticks plot.ConstantTicks
	for g, m := range modes {
		ticks = append(ticks, plot.Tick{Value: float64(g), Label: m})
	}
	p.X.Tick.Marker = ticks
	never := neverLabels{style: p.X.Tick.Label}
	never.style.Font.Size = vg.Points(8)
	never.style.XAlign, never.style.YAlign = draw.XCenter, draw.YBottom
	// the p50 and the max of each mode, by contender
	p50, slowest := map[string]map[string]results.Row{}, map[string]map[string]results.Row{}
	for _, m := range modes {
		p50[m], slowest[m] = measured(f.a.Column("handover", m, results.HandoverMetrics.P50.Name)), measured(f.a.Column("handover", m, results.HandoverMetrics.Max.Name))
	}
	for i, c := range contenders {
		b := &logBars{groups: len(modes), index: i, series: len(contenders), fill: f.lineStyle(c).Color}
		never.bars = append(never.bars, b)
		if k := f.familyIndex(c); k > 0 && !f.isFloor(c) {
			b.stripes = vg.Points(float64(2 + k))
		}
		for _, m := range modes {
			v, w := math.NaN(), math.NaN()
			if x, ok := p50[m][c]; ok {
				v = math.Max(x.Median, 1e-3)
			}
			if x, ok := slowest[m][c]; ok {
				w = math.Max(x.Median, 1e-3)
			}
			at, capped := f.a.NeverAt("handover", c, m, results.HandoverMetrics.P50.Name)
			label := ""
			if capped {
				v, label = float64(at.Nanoseconds())/nanoseconds["ms"], f.a.NeverText("handover", c, m)
			}
			b.values, b.whisker, b.capped, b.labels = append(b.values, v), append(b.whisker, w), append(b.capped, capped), append(b.labels, label)
		}
		p.Add(b)
		p.Legend.Add(c, b)
	}
	p.Add(never)
	if lease, ok := f.duration(contenders[0], "lease"); ok {
		// crash and freeze handovers are bound by the lease: draw it
		ms := float64(lease) / 1e6
		ref, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: ms}, {X: float64(len(modes)) - 0.5, Y: ms}})
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		ref.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		p.Add(ref)
		p.Legend.Add("lease "+lease.String(), ref)
	}
	return svgOf(p)
}

// measured keeps a column's measured figures, by contender.
func measured(col analysis.FigureColumn) map[string]results.Row {
	out := map[string]results.Row{}
	for _, x := range col.Figures {
		if x.Measured {
			out[x.Contender] = x.Row
		}
	}
	return out
}

// grantsChart draws the grants each fairness client got, summed over the
// repetitions, one bar series per contender.
func (f *figures) grantsChart(variant string) ([]byte, error) {
	g := f.a.FairnessGrants(variant)
	contenders, clients := f.a.ContendersIn("fairness"), g.Clients
	if len(clients) == 0 {
		return nil, nil
	}
	p := newPlot("Fairness: grants per client ("+variant+", all repetitions)", "client", "grants")
	var shown []string
	top := 0.0
	for _, c := range contenders {
		for _, id := range clients {
			if n := float64(g.Grants[c][id]); n > 0 {
				top = math.Max(top, n)
				if !slices.Contains(shown, c) {
					shown = append(shown, c)
				}
			}
		}
	}
	if len(shown) == 0 {
		return nil, nil
	}
	width := vg.Points(float64((chartWidth - legendWidth).Points()) * 0.6 / float64(len(clients)*len(shown)))
	for series, c := range shown {
		vals := make(plotter.Values, len(clients))
		for i, id := range clients {
			vals[i] = float64(g.Grants[c][id])
		}
		bc, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		bc.Color = f.lineStyle(c).Color
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(float64(series)-float64(len(shown)-1)/2) * width
		p.Add(bc)
		p.Legend.Add(c, bc)
	}
	p.NominalX(clients...)
	p.Y.Min = 0
	p.Y.Max = top * 1.1
	p.Y.Tick.Marker = readableTicks
	return svgOf(p)
}
