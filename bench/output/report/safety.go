package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// safetySection reads the safety scenario: per variant what reached an
// unfenced and a fenced store, the learn-first margins (with a chart and
// the fault proxy's own cost beside them) and why variants were skipped.
// The figure tables per variant follow (figureTables).
func (f *figures) safetySection(d *document) error {
	svg, err := f.marginChart()
	if err != nil {
		return err
	}
	if svg != nil {
		d.add(chart{name: "safety-margins", caption: "Host loss: margin between the old holder learning it lost the lock and the new holder's grant (bar: p50 of the trials, whisker: the smallest; medians across repetitions). Above zero the holder learned first; below zero it still believed it held the lock after the new grant.", svg: svg})
	}
	locks := f.locks("safety")
	var items []string
	for _, v := range f.variants("safety") {
		var parts []string
		if line := f.listFigures("safety", v, results.SafetyMetrics.UnsafeWritesUnfenced.Name, locks); line != "" {
			parts = append(parts, "stale writes accepted by the unfenced store: "+line)
		}
		if line := f.listFigures("safety", v, results.SafetyMetrics.UnsafeWritesFenced.Name, locks); line != "" {
			parts = append(parts, "by the fenced store: "+line)
		}
		if line := f.listFigures("safety", v, results.SafetyMetrics.FencedRejections.Name, locks); line != "" {
			parts = append(parts, "writes the fenced store rejected as stale: "+line)
		}
		if line := f.listFigures("safety", v, results.SafetyMetrics.DoubleGrants.Name, locks); line != "" {
			parts = append(parts, "grants while the old holder still believed it held the lock: "+line)
		}
		if line, _ := f.ranked("safety", v, results.SafetyMetrics.LearnFirstMarginMin.Name, locks, true); line != "" {
			parts = append(parts, "smallest learn-first margin, largest first: "+line)
		}
		if len(parts) > 0 {
			items = append(items, fmt.Sprintf("%s — %s.", v, strings.Join(parts, "; ")))
		}
	}
	f.safetyTable(d)
	if len(items) > 0 {
		d.details("Safety: the reading of every variant", func(d *document) {
			d.p("Reading, per variant (counts summed over the trials of a repetition, medians across repetitions):")
			d.add(list{items: items})
		})
	}
	d.p("A lock without a fencing token has no fenced figure: a store can only fence writes that carry a token (each contender's token setting says what it has). A token from a counter on a single server is ordered with that server's grants; independent masters have no common counter, so there is no token to fence with.")
	if line := f.listFigures("safety", "host-loss", results.SafetyMetrics.ProxyOverheadP50.Name, locks); line != "" {
		d.details("Safety: what the fault proxy adds", func(d *document) {
			d.p("The host-loss holder reaches its servers through an embedded fault proxy; what one proxy link adds to a small round trip (p50, measured in the same step): " + line + ".")
		})
	}
	return nil
}

// safetyTable is the safety section's key table: per variant the stale
// writes the unfenced and the fenced store accepted, and the smallest
// learn-first margin where the variant measures it.
func (f *figures) safetyTable(d *document) {
	const s = "safety"
	var cols []column
	for _, v := range f.variants(s) {
		if f.measures(s, v, results.SafetyMetrics.UnsafeWritesUnfenced.Name) {
			cols = append(cols, column{head: v + ": stale writes, unfenced / fenced store", value: func(c string) (string, bool) {
				u, uok := f.row(s, c, v, results.SafetyMetrics.UnsafeWritesUnfenced.Name)
				if why := f.a.FailedFigure(s, c, v, results.SafetyMetrics.UnsafeWritesUnfenced.Name, uok); why != "" {
					return why, true
				}
				if !uok {
					return "", false
				}
				fenced := "–"
				if x, ok := f.row(s, c, v, results.SafetyMetrics.UnsafeWritesFenced.Name); ok {
					fenced = results.Num(x.Median)
				}
				return results.Num(u.Median) + " / " + fenced, true
			}})
		}
		if f.measures(s, v, results.SafetyMetrics.LearnFirstMarginMin.Name) {
			cols = append(cols, f.figureColumn(v+": smallest learn-first margin", s, v, results.SafetyMetrics.LearnFirstMarginMin.Name))
		}
	}
	for _, part := range chunks(cols) {
		if t, ok := f.contenderTable(f.locks(s), part); ok {
			d.add(t)
		}
	}
}

// marginChart draws the host-loss learn-first margins: per contender a bar
// at the p50 with a whisker down (or up) to the smallest margin.
func (f *figures) marginChart() ([]byte, error) {
	var cs []string
	for _, c := range f.locks("safety") {
		if _, ok := f.row("safety", c, "host-loss", results.SafetyMetrics.LearnFirstMarginP50.Name); ok {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return nil, nil
	}
	p := newPlot("Host loss: who learns first", "contender (bar: p50, whisker: min)", "grant − holder learned (ms)")
	p.Y.Tick.Marker = readableTicks
	var ticks plot.ConstantTicks
	lo, hi := 0.0, 0.0 // the y range: zero and every bar and whisker
	for i, c := range cs {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: c})
		p50, _ := f.row("safety", c, "host-loss", results.SafetyMetrics.LearnFirstMarginP50.Name)
		lo, hi = math.Min(lo, p50.Median), math.Max(hi, p50.Median)
		bar, err := plotter.NewBarChart(plotter.Values{p50.Median}, vg.Points(28))
		if err != nil {
			return nil, fmt.Errorf("report: margin chart: %w", err)
		}
		bar.XMin = float64(i)
		bar.Color = f.lineStyle(c).Color
		bar.LineStyle.Width = 0
		p.Add(bar)
		if m, ok := f.row("safety", c, "host-loss", results.SafetyMetrics.LearnFirstMarginMin.Name); ok && !math.IsNaN(m.Median) {
			lo, hi = math.Min(lo, m.Median), math.Max(hi, m.Median)
			w, err := plotter.NewLine(plotter.XYs{{X: float64(i), Y: p50.Median}, {X: float64(i), Y: m.Median}})
			if err != nil {
				return nil, fmt.Errorf("report: margin chart: %w", err)
			}
			w.Width = vg.Points(1.5)
			p.Add(w)
		}
		p.Legend.Add(c, bar)
	}
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Width = vg.Points(1)
	p.Add(zero)
	p.X.Tick.Marker = ticks
	// the names stand upright under their bars, so that long names of
	// neighbours never overlap
	p.X.Tick.Label.Rotation, p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = math.Pi/2, draw.XRight, draw.YCenter
	p.X.Min, p.X.Max = -0.6, float64(len(cs))-0.4
	pad := 0.1 * math.Max(hi-lo, 1)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	if lo == 0 {
		p.Y.Min = 0
	}
	return svgOf(p)
}
