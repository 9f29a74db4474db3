package report

import (
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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
	// stripes, when positive, lays white stripes this many points apart
	// over the fill: a family's later members share its hue
	stripes vg.Length
	// capped marks bars drawn at a bound rather than at a figure (the
	// waiter never got the lock within it): outlined, not filled, and
	// labelled (labels, "never (> 5s)") by neverLabels.
	capped []bool
	labels []string
}

// stripe draws the white stripes of a bar spanning x0..x1, y0..y1.
func (b *logBars) stripe(c draw.Canvas, x0, x1, y0, y1 vg.Length) {
	if b.stripes <= 0 {
		return
	}
	ls := draw.LineStyle{Color: color.White, Width: vg.Points(0.8)}
	for y := y0 + b.stripes; y < y1; y += b.stripes {
		c.StrokeLine2(ls, x0, y, x1, y)
	}
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
			b.stripe(c, trX(center-half), trX(center+half), c.Min.Y, min(top, c.Max.Y))
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
	b.stripe(*c, c.Min.X, c.Max.X, c.Min.Y, c.Max.Y)
}

// neverLabels writes into the chart what a capped bar means: over the
// capped bars of each group one label per distinct text ("never (> 5s)"),
// centred over its bars just above the bound, further texts stacked
// above, so that labels of neighbouring bars never overlap.
type neverLabels struct {
	bars  []*logBars
	style text.Style
}

// neverRun is one label of a group: its text, the centres of its bars
// and the highest bound they are drawn at.
type neverRun struct {
	text string
	xs   []float64
	at   float64
}

func (n neverLabels) runs(g int) []neverRun {
	var runs []neverRun
	for _, b := range n.bars {
		if g >= len(b.capped) || !b.capped[g] || g >= len(b.labels) || b.labels[g] == "" {
			continue
		}
		center, _ := b.pos(g)
		i := slices.IndexFunc(runs, func(r neverRun) bool { return r.text == b.labels[g] })
		if i < 0 {
			runs = append(runs, neverRun{text: b.labels[g]})
			i = len(runs) - 1
		}
		runs[i].xs = append(runs[i].xs, center)
		runs[i].at = math.Max(runs[i].at, b.values[g])
	}
	return runs
}

// Plot implements plot.Plotter.
func (n neverLabels) Plot(c draw.Canvas, p *plot.Plot) {
	if len(n.bars) == 0 {
		return
	}
	trX, trY := p.Transforms(&c)
	line := n.style.Font.Size * 1.2
	for g := range n.bars[0].groups {
		for k, r := range n.runs(g) {
			x := 0.0
			for _, v := range r.xs {
				x += v / float64(len(r.xs))
			}
			// within the plot area, however close to its edge the bars
			half := n.style.Width(r.text) / 2
			at := min(max(trX(x), c.Min.X+half), c.Max.X-half)
			c.FillText(n.style, vg.Point{X: at, Y: trY(r.at) + vg.Points(3) + vg.Length(k)*line}, r.text)
		}
	}
}

// DataRange implements plot.DataRanger: room above the highest bound for
// the labels.
func (n neverLabels) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, b := range n.bars {
		for g := range b.groups {
			for k, r := range n.runs(g) {
				xmin, xmax = math.Min(xmin, -0.5), math.Max(xmax, float64(b.groups)-0.5)
				ymin, ymax = math.Min(ymin, r.at), math.Max(ymax, r.at*math.Pow(4, float64(k+1)))
			}
		}
	}
	if math.IsInf(ymin, 0) {
		return 0, 0, 1, 1
	}
	return xmin, xmax, ymin, ymax
}
