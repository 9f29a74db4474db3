package report

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
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
	// waiter never got the lock within it): outlined, not filled.
	capped []bool
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
