package report

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// faultText labels a fault in a timeline: "#17 host loss".
func faultText(ft results.ChaosFaultSpan) string {
	short := faultLabel[ft.Kind]
	if short == "" {
		short = ft.Kind
	}
	return fmt.Sprintf("#%d %s", ft.ID, short)
}

// chaosTimeline draws a contender's timeline as an SVG document: written
// by hand so that it is small (hundreds of bars) and byte-identical for
// the same data.
func (f *figures) chaosTimeline(r analysis.ChaosRecord) []byte {
	tl := r.Chaos.Timeline
	span := max(tl.SpanMS, 1)
	plotW := tlWidth - tlLeft - tlRight
	x := func(ms float64) float64 { return tlLeft + plotW*min(max(ms, 0), span)/span }
	// each fault's label in the first row where it clears the labels
	// before it, with as many rows as that takes
	var rowEnds []float64
	rows := make([]int, len(tl.Faults))
	for i, ft := range tl.Faults {
		x0 := x(ft.FromMS)
		row := slices.IndexFunc(rowEnds, func(end float64) bool { return end <= x0 })
		if row < 0 {
			rowEnds, row = append(rowEnds, 0), len(rowEnds)
		}
		rows[i], rowEnds[row] = row, x0+tlCharWidth*float64(utf8.RuneCountInString(faultText(ft)))+4
	}
	tlTop := tlLabelRow*float64(max(len(rowEnds), tlLabelRows)) + 7
	height := tlTop + tlLane*float64(len(tl.Lanes)) + tlBottom
	laneOf := map[string]int{}
	for i, l := range tl.Lanes {
		laneOf[l.Client] = i
	}
	cr, cg, cb, _ := f.lineStyle(r.Contender).Color.RGBA()
	hold := fmt.Sprintf("#%02x%02x%02x", cr>>8, cg>>8, cb>>8)

	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="10">`+"\n", tlWidth, height, tlWidth, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", tlWidth, height)
	bottom := tlTop + tlLane*float64(len(tl.Lanes))
	for j, ft := range tl.Faults {
		fill := faultFill[ft.Kind]
		if fill == "" {
			fill = "#888888"
		}
		x0, x1 := x(ft.FromMS), x(ft.ToMS)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.14"><title>%s</title></rect>`+"\n",
			x0, tlTop, max(x1-x0, 1), bottom-tlTop, fill, html.EscapeString(fmt.Sprintf("#%d %s %s %.1f–%.1f s", ft.ID, ft.Kind, ft.Target, ft.FromMS/1000, ft.ToMS/1000)))
		if i, ok := laneOf[ft.Target]; ok {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n",
				x0, tlTop+tlLane*float64(i)+1, max(x1-x0, 1), tlLane-2, fill)
		}
		y := tlLabelRow * float64(rows[j]+1)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s">%s</text>`+"\n", x0, y, fill, html.EscapeString(faultText(ft)))
	}
	for i, l := range tl.Lanes {
		y := tlTop + tlLane*float64(i)
		fmt.Fprintf(&b, `<text x="4" y="%.1f">%s</text>`+"\n", y+tlLane/2+3.5, html.EscapeString(l.Client))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`+"\n", tlLeft, y+tlLane, tlLeft+plotW, y+tlLane)
		for _, bar := range l.Bars {
			x0, x1 := x(bar.FromMS), x(bar.ToMS)
			w := max(x1-x0, 0.6)
			switch bar.Kind {
			case results.BarWait:
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#bbbbbb"/>`+"\n", x0, y+tlLane/2-2, w, 4.0)
			case results.BarLost:
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#e08a00"/>`+"\n", x0, y+3, w, tlLane-6)
			case results.BarUnended:
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="%s"/>`+"\n", x0, y+3, w, tlLane-6, hold)
			default:
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x0, y+3, w, tlLane-6, hold)
			}
		}
	}
	// The time axis, in seconds.
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", tlLeft, bottom, tlLeft+plotW, bottom)
	step := tickStep(span / 1000)
	for s := 0.0; s*1000 <= span; s += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", x(s*1000), bottom, x(s*1000), bottom+4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(s*1000), bottom+14, results.Num(s))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">s from the history's start</text>`+"\n", tlLeft+plotW, bottom+28)
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="4" fill="#bbbbbb"/><text x="%.1f" y="%.1f">acquire</text>`+"\n", tlLeft, bottom+24, tlLeft+18, bottom+29)
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="10" fill="%s"/><text x="%.1f" y="%.1f">hold</text>`+"\n", tlLeft+70, bottom+21, hold, tlLeft+88, bottom+29)
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="10" fill="#e08a00"/><text x="%.1f" y="%.1f">hold ended by the lost notice</text>`+"\n", tlLeft+125, bottom+21, tlLeft+143, bottom+29)
	lx := tlLeft
	for _, k := range analysis.ChaosKinds {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="10" fill="%s" fill-opacity="0.35"/><text x="%.1f" y="%.1f">%s</text>`+"\n", lx, bottom+35, faultFill[k], lx+18, bottom+43, html.EscapeString(k))
		lx += 30 + 6*float64(len(k))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// tickStep returns a round step for an axis of span seconds: about ten
// ticks.
func tickStep(span float64) float64 {
	for _, s := range []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600} {
		if span/s <= 12 {
			return s
		}
	}
	return 1200
}
