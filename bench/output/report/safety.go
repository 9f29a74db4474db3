package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
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
	readings := f.a.SafetyReadings()
	var items []string
	for _, rd := range readings {
		var parts []string
		if line := quotedList(rd.Unfenced); line != "" {
			parts = append(parts, "stale writes accepted by the unfenced store: "+line)
		}
		if line := quotedList(rd.Fenced); line != "" {
			parts = append(parts, "by the fenced store: "+line)
		}
		if line := quotedList(rd.Rejected); line != "" {
			parts = append(parts, "writes the fenced store rejected as stale: "+line)
		}
		if line := quotedList(rd.DoubleGrants); line != "" {
			parts = append(parts, "grants while the old holder still believed it held the lock: "+line)
		}
		if line := rankingLine(rd.Margins); line != "" {
			parts = append(parts, "smallest learn-first margin, largest first: "+line)
		}
		if len(parts) > 0 {
			items = append(items, fmt.Sprintf("%s — %s.", rd.Variant, strings.Join(parts, "; ")))
		}
	}
	f.safetyTable(d, readings)
	if len(items) > 0 {
		d.details("Safety: the reading of every variant", func(d *document) {
			d.p("Reading, per variant (counts summed over the trials of a repetition, medians across repetitions):")
			d.add(list{items: items})
		})
	}
	d.p("A lock without a fencing token has no fenced figure: a store can only fence writes that carry a token (each contender's token setting says what it has). A token from a counter on a single server is ordered with that server's grants; independent masters have no common counter, so there is no token to fence with.")
	if line := quotedList(f.a.ProxyOverhead()); line != "" {
		d.details("Safety: what the fault proxy adds", func(d *document) {
			d.p("The host-loss holder reaches its servers through an embedded fault proxy; what one proxy link adds to a small round trip (p50, measured in the same step): " + line + ".")
		})
	}
	return nil
}

// safetyTable is the safety section's key table: per variant the stale
// writes the unfenced and the fenced store accepted, and the smallest
// learn-first margin where the variant measures it.
func (f *figures) safetyTable(d *document, readings []analysis.SafetyReading) {
	const s = "safety"
	var cols []column
	for _, rd := range readings {
		if rd.Stale != nil {
			stale := rd.Stale
			cols = append(cols, column{head: rd.Variant + ": stale writes, unfenced / fenced store", value: func(c string) (string, bool) {
				x, ok := stale[c]
				if !ok {
					return "", false
				}
				if x.Failed != "" {
					return x.Failed, true
				}
				fenced := "–"
				if x.Fenced != nil {
					fenced = results.Num(x.Fenced.Median)
				}
				return results.Num(x.Unfenced.Median) + " / " + fenced, true
			}})
		}
		if rd.MarginMeasured {
			cols = append(cols, f.figureColumn(rd.Variant+": smallest learn-first margin", f.a.Column(s, rd.Variant, results.SafetyMetrics.LearnFirstMarginMin.Name)))
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
	bars := f.a.HostLossMargins()
	if len(bars) == 0 {
		return nil, nil
	}
	p := newPlot("Host loss: who learns first", "contender (bar: p50, whisker: min)", "grant − holder learned (ms)")
	p.Y.Tick.Marker = readableTicks
	var ticks plot.ConstantTicks
	lo, hi := 0.0, 0.0 // the y range: zero and every bar and whisker
	for i, b := range bars {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: b.Contender})
		lo, hi = math.Min(lo, b.P50), math.Max(hi, b.P50)
		bar, err := plotter.NewBarChart(plotter.Values{b.P50}, vg.Points(28))
		if err != nil {
			return nil, fmt.Errorf("report: margin chart: %w", err)
		}
		bar.XMin = float64(i)
		bar.Color = f.lineStyle(b.Contender).Color
		bar.LineStyle.Width = 0
		p.Add(bar)
		if b.HasMin {
			lo, hi = math.Min(lo, b.Min), math.Max(hi, b.Min)
			w, err := plotter.NewLine(plotter.XYs{{X: float64(i), Y: b.P50}, {X: float64(i), Y: b.Min}})
			if err != nil {
				return nil, fmt.Errorf("report: margin chart: %w", err)
			}
			w.Width = vg.Points(1.5)
			p.Add(w)
		}
		p.Legend.Add(b.Contender, bar)
	}
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Width = vg.Points(1)
	p.Add(zero)
	p.X.Tick.Marker = ticks
	// the names stand upright under their bars, so that long names of
	// neighbours never overlap
	p.X.Tick.Label.Rotation, p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = math.Pi/2, draw.XRight, draw.YCenter
	p.X.Min, p.X.Max = -0.6, float64(len(bars))-0.4
	pad := 0.1 * math.Max(hi-lo, 1)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	if lo == 0 {
		p.Y.Min = 0
	}
	return svgOf(p)
}
