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
)

// Chart size: wide enough for a legend beside the lines, small enough for
// a phone after CSS scaling.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 3.8 * vg.Inch
)

// palette gives every lock without a colour of its own a fixed colour by
// its position among the locks; floors are grey and dashed so they read as
// baselines.
var palette = []color.RGBA{
	{0x1f, 0x5f, 0xbf, 0xff}, // blue
	{0xc8, 0x32, 0x2d, 0xff}, // red
	{0xe0, 0x8a, 0x00, 0xff}, // orange
	{0x2e, 0x8b, 0x57, 0xff}, // green
	{0x7b, 0x3f, 0xa0, 0xff}, // purple
	{0x8c, 0x56, 0x3c, 0xff}, // brown
	{0x17, 0xa2, 0xb8, 0xff}, // teal
	{0xd6, 0x33, 0x84, 0xff}, // pink
	{0x6b, 0x8e, 0x23, 0xff}, // olive
	{0x1a, 0x2b, 0x6d, 0xff}, // navy
}

var (
	floorGrey   = [...]color.RGBA{{0x55, 0x55, 0x55, 0xff}, {0x99, 0x99, 0x99, 0xff}}
	floorDashes = [...][]vg.Length{{vg.Points(5), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}}
)

// lineStyle returns the colour and dashes of a contender's line: its own
// colour (ContenderInfo.Colour), else the next palette colour no other
// contender has taken, dashed for floors.
func (f *figures) lineStyle(contender string) draw.LineStyle {
	ls := draw.LineStyle{Width: vg.Points(1.5)}
	if f.isFloor(contender) {
		floor := 0
		for _, c := range f.contenders {
			if c == contender {
				break
			}
			if f.isFloor(c) {
				floor++
			}
		}
		ls.Color, ls.Dashes = floorGrey[floor%len(floorGrey)], floorDashes[floor%len(floorDashes)]
	}
	if c, ok := f.colours()[contender]; ok {
		ls.Color = c
	}
	return ls
}

// colours assigns the chart colour of every lock and of every floor with
// a colour of its own.
func (f *figures) colours() map[string]color.RGBA {
	out := map[string]color.RGBA{}
	taken := map[color.RGBA]bool{}
	for _, c := range f.contenders {
		if col, ok := parseColour(f.info[c].Colour); ok {
			out[c], taken[col] = col, true
		}
	}
	next := 0
	for _, c := range f.contenders {
		if _, ok := out[c]; ok || f.isFloor(c) {
			continue
		}
		for i := range palette { // the first free colour, or any once all are taken
			if col := palette[(next+i)%len(palette)]; !taken[col] || i == len(palette)-1 {
				out[c], taken[col], next = col, true, (next+i+1)%len(palette)
				break
			}
		}
	}
	return out
}

// parseColour reads "#rrggbb".
func parseColour(s string) (color.RGBA, bool) {
	if len(s) != 7 || s[0] != '#' {
		return color.RGBA{}, false
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return color.RGBA{}, false
	}
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}, true
}

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
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
		}
	}
	return ticks
})

// readableLogTicks labels the decades of a log axis as plain numbers
// ("100000", not "1e+05").
var readableLogTicks = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
		}
	}
	return ticks
})

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
func (f *figures) percentileChart(title, scenario, variant, hist, yLabel, out string) ([]byte, error) {
	p := newPlot(title, "percentile (log of 1/(1−q))", yLabel)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = readableLogTicks
	maxNines := 0
	lines := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range f.scenarioContenders(scenario) {
		h, unit, err := f.histogram(scenario, c, variant, hist)
		if err != nil {
			return nil, err
		}
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		xys, nines := percentileLine(h, unit, out)
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
	p := newPlot("Short locks on distinct keys: throughput against workers", "workers (log scale)", "completed cycles/s")
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	lines := 0
	for _, c := range f.scenarioContenders("throughput") {
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, v := range f.variantsWhere("throughput", closedDistinct) {
			w := f.params("throughput", v).Workers
			x, ok := f.row("throughput", c, v, "cycles_per_sec")
			if !ok {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(w), Y: x.Median})
			errs = append(errs, struct{ Low, High float64 }{x.Median - x.Min, x.Max - x.Median})
			if !hasTick(ticks, float64(w)) {
				ticks = append(ticks, plot.Tick{Value: float64(w), Label: strconv.Itoa(w)})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		l.LineStyle = f.lineStyle(c)
		pts.Color = l.LineStyle.Color
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

// logBars is a grouped bar chart on a log value axis: bars grow from the
// bottom of the plot area (a log axis has no zero), with a whisker from the
// bar's top to a second value (the maximum).
type logBars struct {
	groups  int
	index   int // this series' position in the group
	series  int // series per group
	values  []float64
	whisker []float64 // same length as values; NaN for none
	fill    color.Color
	// capped marks bars drawn at a bound rather than at a figure (the
	// waiter never got the lock within it): outlined, not filled.
	capped []bool
}

func (b *logBars) pos(g int) (center, half float64) {
	width := 0.8 / float64(b.series)
	return float64(g) + (float64(b.index)-float64(b.series-1)/2)*width, width / 2
}

// Plot implements plot.Plotter.
func (b *logBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for g, v := range b.values {
		if math.IsNaN(v) {
			continue
		}
		center, half := b.pos(g)
		top := trY(v)
		rect := c.ClipPolygonY([]vg.Point{
			{X: trX(center - half), Y: c.Min.Y}, {X: trX(center + half), Y: c.Min.Y},
			{X: trX(center + half), Y: top}, {X: trX(center - half), Y: top},
		})
		if g < len(b.capped) && b.capped[g] {
			c.StrokeLines(draw.LineStyle{Color: b.fill, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}, append(rect, rect[0]))
		} else {
			c.FillPolygon(b.fill, rect)
		}
		if w := b.whisker[g]; !math.IsNaN(w) && w > v {
			ls := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
			x := trX(center)
			c.StrokeLines(ls, c.ClipLinesY([]vg.Point{{X: x, Y: top}, {X: x, Y: trY(w)}})...)
			c.StrokeLines(ls, c.ClipLinesY([]vg.Point{{X: x - vg.Points(3), Y: trY(w)}, {X: x + vg.Points(3), Y: trY(w)}})...)
		}
	}
}

// DataRange implements plot.DataRanger.
func (b *logBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = math.Inf(1), math.Inf(-1)
	for i, v := range b.values {
		for _, y := range []float64{v, b.whisker[i]} {
			if !math.IsNaN(y) && y > 0 {
				ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			}
		}
	}
	if math.IsInf(ymin, 0) {
		ymin, ymax = 1, 10
	}
	return -0.5, float64(b.groups) - 0.5, ymin / 3, ymax * 2
}

// Thumbnail implements plot.Thumbnailer for the legend.
func (b *logBars) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.fill, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// handoverChart draws, per handover mode, one bar per contender: the
// median of the per-repetition p50, with a whisker to the median max.
func (f *figures) handoverChart() ([]byte, error) {
	modes := f.variants("handover")
	contenders := f.scenarioContenders("handover")
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
	for i, c := range contenders {
		b := &logBars{groups: len(modes), index: i, series: len(contenders), fill: f.lineStyle(c).Color}
		for _, m := range modes {
			v, w := math.NaN(), math.NaN()
			if x, ok := f.row("handover", c, m, "p50"); ok {
				v = math.Max(x.Median, 1e-3)
			}
			if x, ok := f.row("handover", c, m, "max"); ok {
				w = math.Max(x.Median, 1e-3)
			}
			at, capped := f.neverAt("handover", c, m, "p50")
			if capped {
				v = at
			}
			b.values, b.whisker, b.capped = append(b.values, v), append(b.whisker, w), append(b.capped, capped)
		}
		p.Add(b)
		p.Legend.Add(c, b)
	}
	return svgOf(p)
}

// grantsChart draws the grants each fairness client got, summed over the
// repetitions, one bar series per contender.
func (f *figures) grantsChart(variant string) ([]byte, error) {
	contenders := f.scenarioContenders("fairness")
	var clients []string
	grants := map[string]map[string]float64{}
	for _, c := range contenders {
		grants[c] = map[string]float64{}
		for _, raw := range f.raws("fairness", c, variant) {
			for _, cl := range raw.Clients {
				if !slices.Contains(clients, cl.ID) {
					clients = append(clients, cl.ID)
				}
				grants[c][cl.ID] += float64(cl.Counts["grants"])
			}
		}
	}
	if len(clients) == 0 {
		return nil, nil
	}
	p := newPlot("Fairness: grants per client ("+variant+", all repetitions)", "client", "grants")
	var shown []string
	top := 0.0
	for _, c := range contenders {
		for _, id := range clients {
			if g := grants[c][id]; g > 0 {
				top = math.Max(top, g)
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
			vals[i] = grants[c][id]
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
