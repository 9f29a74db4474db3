package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// The failover section: grants over time around the fault per variant,
// one table of the figures the scenario is about, the variants skipped and
// why, and a reading.

// failoverFigures are the columns of the failover tables, in tables of
// at most four figures so that a 1280-px page holds them (in the report's
// details).
var failoverFigures = [][]failoverColumn{
	{
		{"unavailable", func(l analysis.FailoverLock) *results.Row { return l.Unavailable }},
		{"D (detection)", func(l analysis.FailoverLock) *results.Row { return l.Detection }},
		{"recovery after restart or move", func(l analysis.FailoverLock) *results.Row { return l.Recovery }},
		{"double grants", func(l analysis.FailoverLock) *results.Row { return l.DoubleGrant }},
	},
	{
		{"empty 100-ms steps", func(l analysis.FailoverLock) *results.Row { return l.ZeroGrant }},
		{"failed attempts", func(l analysis.FailoverLock) *results.Row { return l.FailedAttempts }},
		{"lost holders", func(l analysis.FailoverLock) *results.Row { return l.LostHolders }},
		{"tokens monotonic", func(l analysis.FailoverLock) *results.Row { return l.TokensMonotonic }},
	},
	{
		{"acquire p99 in fault", func(l analysis.FailoverLock) *results.Row { return l.AcquireP99 }},
		{"release p99 in fault", func(l analysis.FailoverLock) *results.Row { return l.ReleaseP99 }},
	},
}

// standbyFigures are the columns of the key table of a standby pair's
// variants, the rows that carry D.
var standbyFigures = []failoverColumn{
	failoverFigures[0][1], failoverFigures[0][0], failoverFigures[0][3], failoverFigures[1][3],
}

// failoverColumn is one figure of a failover table: its heading and the
// lock's figure it shows.
type failoverColumn struct {
	head string
	of   func(analysis.FailoverLock) *results.Row
}

// failoverVariantLabel marks the unfenced variant in the tables.
func failoverVariantLabel(fv analysis.FailoverVariant) string {
	if fv.Unfenced {
		return fv.Variant + " (no fault: the unfenced, unsafe deployment)"
	}
	return fv.Variant
}

func (f *figures) failoverSection(d *document) error {
	fvs := f.a.Failover()
	d.p("The charts show the first repetition of each contender, time 0 at the kill or stop (a standby pair: the primary's host lost); the dotted line is the median moment the restart began (a standby pair: the address moved). Each contender ran on its own, one after the other.")
	var charts []chart
	for _, fv := range fvs {
		svg, err := f.failoverChart(fv)
		if err != nil {
			return err
		}
		if svg != nil {
			charts = append(charts, chart{name: "failover-" + anchor(fv.Variant), caption: "Grants per 100 ms around the fault (" + fv.Variant + ").", svg: svg})
		}
	}
	firstChart(d, "Failover of the coordinator: the other variants' charts", charts)
	f.unavailableTable(d, fvs)
	hasD := func(fv analysis.FailoverVariant, l analysis.FailoverLock) bool {
		return l.Detection != nil || fv.Unfenced
	}
	if t, ok := f.failoverTable(fvs, standbyFigures, hasD); ok {
		d.p("A standby pair: D is the detection and switch, from the fault in effect to the address's move (median across repetitions, min–max in parentheses).")
		d.add(t)
	}
	if line := standbyMechanism(fvs); line != "" {
		d.p(line)
	}
	d.details("Failover: every figure of every variant, and the reading", func(d *document) {
		for _, group := range failoverFigures {
			if t, ok := f.failoverTable(fvs, group, nil); ok {
				d.add(t)
			}
		}
		d.p(failoverReading(fvs))
	})
	return nil
}

// unavailableTable is the failover section's key table: per lock and
// variant how long it was unavailable (the glossary's one definition:
// the longest stretch without a grant), all in one unit. The unfenced
// variant is left out: two servers granting at once is no availability;
// so are a standby pair's variants, whose table beside D has the figure.
func (f *figures) unavailableTable(d *document, fvs []analysis.FailoverVariant) {
	var shown []analysis.FailoverVariant
	var rows []results.Row
	for _, fv := range fvs {
		if fv.Unfenced || fv.Detection {
			continue
		}
		measured := false
		for _, l := range fv.Locks {
			if l.Unavailable != nil {
				rows, measured = append(rows, *l.Unavailable), true
			}
		}
		if measured {
			shown = append(shown, fv)
		}
	}
	if len(shown) == 0 {
		return
	}
	show := rowDisplay(rows...)
	var cols []column
	var locks []string
	for _, fv := range shown {
		byLock := map[string]*results.Row{}
		for _, l := range fv.Locks {
			byLock[l.Contender] = l.Unavailable
			if !slices.Contains(locks, l.Contender) {
				locks = append(locks, l.Contender)
			}
		}
		cols = append(cols, column{head: withDisplayUnit(fv.Variant, show), value: func(c string) (string, bool) {
			x := byLock[c]
			if x == nil {
				return "", false
			}
			return f.spread(*x, show), true
		}})
	}
	t, ok := f.contenderTable(locks, cols)
	if !ok {
		return
	}
	d.p("Unavailable, per variant: the longest stretch without a grant, from the last grant before the fault to the first after it (median across repetitions, min–max in parentheses; – where the variant does not apply; a standby pair's in the table with D below).")
	d.add(t)
}

// failoverTable is one table of the failover figures: a row per variant
// and lock that keep accepts (nil: every one), a column per figure of
// group.
func (f *figures) failoverTable(fvs []analysis.FailoverVariant, group []failoverColumn, keep func(analysis.FailoverVariant, analysis.FailoverLock) bool) (table, bool) {
	t := table{head: []string{"variant", "contender"}, labels: 2}
	shows := make([]results.Display, len(group))
	for j, x := range group {
		var rows []results.Row
		for _, fv := range fvs {
			for _, l := range fv.Locks {
				if r := x.of(l); r != nil {
					rows = append(rows, *r)
				}
			}
		}
		shows[j] = rowDisplay(rows...)
		t.head = append(t.head, withDisplayUnit(x.head, shows[j]))
	}
	for _, fv := range fvs {
		for _, l := range fv.Locks {
			if keep != nil && !keep(fv, l) {
				continue
			}
			row := []cell{{text: failoverVariantLabel(fv)}, {text: l.Contender}}
			any := false
			for j, x := range group {
				text := "–"
				if r := x.of(l); r != nil {
					text, any = f.spread(*r, shows[j]), true
				}
				row = append(row, cell{text: text})
			}
			if any {
				t.rows = append(t.rows, row)
			}
		}
	}
	return t, len(t.rows) > 0
}

// standbyMechanism says in one line how the standby pair's address moved
// and how its primary's host was lost, from the records' counts; "" when
// no record says.
func standbyMechanism(fvs []analysis.FailoverVariant) string {
	var vip, forwarder []string
	for _, fv := range fvs {
		if fv.VirtualIP {
			vip = append(vip, fv.Variant)
		}
		if fv.Forwarder {
			forwarder = append(forwarder, fv.Variant)
		}
	}
	var parts []string
	if len(vip) > 0 {
		parts = append(parts, "a virtual IP, moved from the primary's host link to the standby's, the primary's link cut (the emulated network; "+strings.Join(vip, ", ")+")")
	}
	if len(forwarder) > 0 {
		parts = append(parts, "the bench's TCP forwarder, which resets each old connection at its client's next segment, the primary frozen (loopback, no emulated hosts; "+strings.Join(forwarder, ", ")+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "The standby pair's one address was " + strings.Join(parts, "; and ") + "."
}

// failoverReading says in words what the figures show.
func failoverReading(fvs []analysis.FailoverVariant) string {
	var parts []string
	for _, fv := range fvs {
		v := fv.Variant
		if fv.Unfenced {
			if line := quotedList(fv.DoubleGrants); line != "" {
				parts = append(parts, fmt.Sprintf("double grants in %s, the unfenced deployment (no fault: its short gap is two servers granting at once, not availability): %s", v, line))
			}
			continue
		}
		if line := rankingLine(fv.Unavailable); line != "" {
			parts = append(parts, fmt.Sprintf("the longest stretch without a grant in %s, shortest first: %s", v, line))
		}
		if line := quotedList(fv.DoubleGrants); line != "" {
			parts = append(parts, fmt.Sprintf("double grants in %s: %s", v, line))
		}
	}
	if len(parts) == 0 {
		return "Reading: no failover figures in this run."
	}
	text := "Reading: " + strings.Join(parts, "; ") + "."
	text += " Unavailable is the longest stretch without a grant, from the last grant before the fault to the first after it; empty 100-ms steps add up the 100-ms steps after the fault in which no grant was made (a stretch shorter than a step may count as none); recovery runs from the moment the restart began (a standby pair: the address's move; the server's start and the clients' retries included); the in-fault percentiles cover acquisitions and releases in flight between the fault and the restart (minority-down: to the end). A release to a dead server costs the worker as much as the release's client lets it (the release p99 in the fault)."
	return text
}

// failoverChart draws the grants per 100 ms of every contender's first
// repetition of variant, aligned at the fault; nil without series.
func (f *figures) failoverChart(fv analysis.FailoverVariant) ([]byte, error) {
	p := newPlot("Failover: grants per 100 ms ("+fv.Variant+")", "seconds since the fault", "grants per 100 ms")
	var restarts []float64
	lines := 0
	top, end := 0.0, 0.0
	var drawn []*plotter.Line
	var names []string
	for _, lk := range fv.Locks {
		grants, marks := lk.Grants, lk.FaultMarks
		if grants == nil || marks == nil || len(marks) < 2 {
			continue
		}
		fault := marks[0] / 1000
		if len(marks) >= 3 {
			restarts = append(restarts, marks[2]/1000-fault)
		}
		xys := make(plotter.XYs, len(grants))
		for i, g := range grants {
			xys[i] = plotter.XY{X: float64(i)*0.1 + 0.05 - fault, Y: g}
			top, end = math.Max(top, g), math.Max(end, xys[i].X)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		l.LineStyle = f.lineStyle(lk.Contender)
		drawn, names = append(drawn, l), append(names, lk.Contender)
		lines++
	}
	if lines == 0 {
		return nil, nil
	}
	top = math.Max(top*1.1, 1)
	// the fault interval, shaded from the fault to the median restart (to
	// the end where the servers stay down), behind the lines
	until := end
	if len(restarts) > 0 {
		until = results.Median(slices.Sorted(slices.Values(restarts)))
	}
	if until > 0 {
		shade, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: until, Y: 0}, {X: until, Y: top}, {X: 0, Y: top}})
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		shade.Color, shade.LineStyle.Width = color.RGBA{0xee, 0xe6, 0xd0, 0xff}, 0
		p.Add(shade)
		p.Legend.Add("fault in effect", shade)
	}
	for i, l := range drawn {
		p.Add(l)
		p.Legend.Add(names[i], l)
	}
	mark := func(x float64, dashes []vg.Length, name string) error {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top}})
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		l.LineStyle = draw.LineStyle{Color: color.RGBA{0x33, 0x33, 0x33, 0xff}, Width: vg.Points(1), Dashes: dashes}
		p.Add(l)
		p.Legend.Add(name, l)
		return nil
	}
	if err := mark(0, []vg.Length{vg.Points(4), vg.Points(2)}, "fault"); err != nil {
		return nil, err
	}
	if len(restarts) > 0 {
		slices.Sort(restarts)
		if err := mark(results.Median(restarts), []vg.Length{vg.Points(1), vg.Points(2)}, "restart or move"); err != nil {
			return nil, err
		}
	}
	p.Y.Min, p.Y.Max = 0, top
	p.Y.Tick.Marker = readableTicks
	p.X.Tick.Marker = readableTicks
	return svgOf(p)
}
