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

	"github.com/monolock/monolock-bench/bench/results"
)

// The failover section: grants over time around the fault per variant,
// one table of the figures the scenario is about, the variants skipped and
// why, and a reading.

// failoverFigures are the columns of the failover tables, in tables of
// at most four figures so that a 1280-px page holds them (in the report's
// details). A column reads its metric, or under an old name a results
// file may still carry.
var failoverFigures = [][]failoverColumn{
	{
		{results.FailoverMetrics.UnavailableMs.Name, "", "unavailable"},
		{results.FailoverMetrics.DetectionMs.Name, "d_ms", "D (detection)"},
		{results.FailoverMetrics.RecoveryMs.Name, "", "recovery after restart or move"},
		{results.FailoverMetrics.DoubleGrants.Name, "", "double grants"},
	},
	{
		{results.FailoverMetrics.ZeroGrantMs.Name, "", "empty 100-ms steps"},
		{results.FailoverMetrics.FailedAttempts.Name, "", "failed attempts"},
		{results.FailoverMetrics.LostHolders.Name, "", "lost holders"},
		{results.FailoverMetrics.TokensMonotonic.Name, "", "tokens monotonic"},
	},
	{
		{results.FailoverMetrics.AcquireP99DuringFault.Name, "", "acquire p99 in fault"},
		{results.FailoverMetrics.ReleaseP99DuringFault.Name, "", "release p99 in fault"},
	},
}

// standbyFigures are the columns of the key table of a standby pair's
// variants, the rows that carry D.
var standbyFigures = []failoverColumn{
	{results.FailoverMetrics.DetectionMs.Name, "d_ms", "D (detection)"},
	{results.FailoverMetrics.UnavailableMs.Name, "", "unavailable"},
	{results.FailoverMetrics.DoubleGrants.Name, "", "double grants"},
	{results.FailoverMetrics.TokensMonotonic.Name, "", "tokens monotonic"},
}

// failoverColumn is one figure of a failover table: its metric, the old
// name a results file may carry instead ("" for none), its heading.
type failoverColumn struct{ metric, old, head string }

// failoverRow reads a figure of the failover table, under its old name
// when the file has only that.
func (f *figures) failoverRow(c, v, metric, old string) (results.Row, bool) {
	if r, ok := f.row("failover", c, v, metric); ok || old == "" {
		return r, ok
	}
	return f.row("failover", c, v, old)
}

// unfenced reports whether a failover variant moves the address without
// the fence: no fault, two servers serving, so its availability is no
// figure to compare.
func (f *figures) unfenced(v string) bool {
	return f.params("failover", v).Fault == results.FaultSwitchNoFence
}

// failoverVariantLabel marks the unfenced variant in the tables.
func (f *figures) failoverVariantLabel(v string) string {
	if f.unfenced(v) {
		return v + " (no fault: the unfenced, unsafe deployment)"
	}
	return v
}

func (f *figures) failoverSection(d *document) error {
	const s = "failover"
	d.p("The charts show the first repetition of each contender, time 0 at the kill or stop (a standby pair: the primary's host lost); the dotted line is the median moment the restart began (a standby pair: the address moved). Each contender ran on its own, one after the other.")
	var charts []chart
	for _, v := range f.variants(s) {
		svg, err := f.failoverChart(v)
		if err != nil {
			return err
		}
		if svg != nil {
			charts = append(charts, chart{name: "failover-" + anchor(v), caption: "Grants per 100 ms around the fault (" + v + ").", svg: svg})
		}
	}
	firstChart(d, "Failover of the coordinator: the other variants' charts", charts)
	f.unavailableTable(d)
	hasD := func(c, v string) bool { return f.measuredD(c, v) || f.unfenced(v) }
	if t, ok := f.failoverTable(standbyFigures, hasD); ok {
		d.p("A standby pair: D is the detection and switch, from the fault in effect to the address's move (median across repetitions, min–max in parentheses).")
		d.add(t)
	}
	if line := f.standbyMechanism(); line != "" {
		d.p(line)
	}
	d.details("Failover: every figure of every variant, and the reading", func(d *document) {
		for _, group := range failoverFigures {
			if t, ok := f.failoverTable(group, nil); ok {
				d.add(t)
			}
		}
		d.p(f.failoverReading())
	})
	return nil
}

// unavailableTable is the failover section's key table: per lock and
// variant how long it was unavailable (the glossary's one definition:
// the longest stretch without a grant), all in one unit. The unfenced
// variant is left out: two servers granting at once is no availability;
// so are a standby pair's variants, whose table beside D has the figure.
func (f *figures) unavailableTable(d *document) {
	const s = "failover"
	metric := results.FailoverMetrics.UnavailableMs.Name
	var vs []string
	var rows []results.Row
	for _, v := range f.variants(s) {
		if f.unfenced(v) || f.hasDetection(v) {
			continue
		}
		for _, c := range f.locks(s) {
			if x, ok := f.row(s, c, v, metric); ok {
				rows = append(rows, x)
				if !slices.Contains(vs, v) {
					vs = append(vs, v)
				}
			}
		}
	}
	if len(vs) == 0 {
		return
	}
	show := rowDisplay(rows...)
	var cols []column
	for _, v := range vs {
		cols = append(cols, column{head: withDisplayUnit(v, show), value: func(c string) (string, bool) {
			x, ok := f.row(s, c, v, metric)
			if !ok {
				return "", false
			}
			return f.spread(x, show), true
		}})
	}
	t, ok := f.contenderTable(f.locks(s), cols)
	if !ok {
		return
	}
	d.p("Unavailable, per variant: the longest stretch without a grant, from the last grant before the fault to the first after it (median across repetitions, min–max in parentheses; – where the variant does not apply; a standby pair's in the table with D below).")
	d.add(t)
}

// measuredD reports whether lock c measured D, a standby pair's
// detection and switch, in failover variant v (detection_ms, or d_ms in
// runs written before its rename).
func (f *figures) measuredD(c, v string) bool {
	_, ok := f.failoverRow(c, v, results.FailoverMetrics.DetectionMs.Name, "d_ms")
	return ok
}

// hasDetection reports whether any lock measured D in failover variant v.
func (f *figures) hasDetection(v string) bool {
	return slices.ContainsFunc(f.locks("failover"), func(c string) bool { return f.measuredD(c, v) })
}

// failoverTable is one table of the failover figures: a row per variant
// and lock that keep accepts (nil: every one), a column per figure of
// group.
func (f *figures) failoverTable(group []failoverColumn, keep func(c, v string) bool) (table, bool) {
	const s = "failover"
	t := table{head: []string{"variant", "contender"}, labels: 2}
	shows := make([]results.Display, len(group))
	for j, x := range group {
		var rows []results.Row
		for _, v := range f.variants(s) {
			for _, c := range f.locks(s) {
				if r, ok := f.failoverRow(c, v, x.metric, x.old); ok {
					rows = append(rows, r)
				}
			}
		}
		shows[j] = rowDisplay(rows...)
		t.head = append(t.head, withDisplayUnit(x.head, shows[j]))
	}
	for _, v := range f.variants(s) {
		for _, c := range f.locks(s) {
			if keep != nil && !keep(c, v) {
				continue
			}
			row := []cell{{text: f.failoverVariantLabel(v)}, {text: c}}
			any := false
			for j, x := range group {
				text := "–"
				if r, ok := f.failoverRow(c, v, x.metric, x.old); ok {
					text, any = f.spread(r, shows[j]), true
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
func (f *figures) standbyMechanism() string {
	var vip, forwarder []string
	for _, v := range f.variants("failover") {
		for _, c := range f.locks("failover") {
			for _, x := range f.raws("failover", c, v) {
				switch {
				case x.Counts["address_move_virtual_ip"] > 0 && !slices.Contains(vip, v):
					vip = append(vip, v)
				case x.Counts["address_move_forwarder"] > 0 && !slices.Contains(forwarder, v):
					forwarder = append(forwarder, v)
				}
			}
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
func (f *figures) failoverReading() string {
	const s = "failover"
	var parts []string
	for _, v := range f.variants(s) {
		if f.unfenced(v) {
			if line := f.listFigures(s, v, results.FailoverMetrics.DoubleGrants.Name, f.locks(s)); line != "" {
				parts = append(parts, fmt.Sprintf("double grants in %s, the unfenced deployment (no fault: its short gap is two servers granting at once, not availability): %s", v, line))
			}
			continue
		}
		if line, _ := f.ranked(s, v, results.FailoverMetrics.UnavailableMs.Name, f.locks(s), false); line != "" {
			parts = append(parts, fmt.Sprintf("the longest stretch without a grant in %s, shortest first: %s", v, line))
		}
		if line := f.listFigures(s, v, results.FailoverMetrics.DoubleGrants.Name, f.locks(s)); line != "" {
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
func (f *figures) failoverChart(variant string) ([]byte, error) {
	const s = "failover"
	p := newPlot("Failover: grants per 100 ms ("+variant+")", "seconds since the fault", "grants per 100 ms")
	var restarts []float64
	lines := 0
	top, end := 0.0, 0.0
	var drawn []*plotter.Line
	var names []string
	for _, c := range f.locks(s) {
		raws := f.raws(s, c, variant)
		if len(raws) == 0 {
			continue
		}
		grants, marks := seriesNamed(raws[0], "grants_per_100ms"), seriesNamed(raws[0], "fault_marks")
		if grants == nil || marks == nil || len(marks.Values) < 2 {
			continue
		}
		fault := marks.Values[0] / 1000
		if len(marks.Values) >= 3 {
			restarts = append(restarts, marks.Values[2]/1000-fault)
		}
		xys := make(plotter.XYs, len(grants.Values))
		for i, g := range grants.Values {
			xys[i] = plotter.XY{X: float64(i)*0.1 + 0.05 - fault, Y: g}
			top, end = math.Max(top, g), math.Max(end, xys[i].X)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		l.LineStyle = f.lineStyle(c)
		drawn, names = append(drawn, l), append(names, c)
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

// seriesNamed returns raw's series called name, or nil.
func seriesNamed(raw results.Raw, name string) *results.Series {
	for i := range raw.Series {
		if raw.Series[i].Name == name {
			return &raw.Series[i]
		}
	}
	return nil
}
