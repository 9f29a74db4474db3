package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// The scale section: memory, coordinator load and CPU against the number
// of sessions, promotion latency against queue depth, the slopes a reader
// can extrapolate with, and why larger counts were skipped.

const scale = "scale"

// seriesChart draws one line per contender on log-scaled axes (y linear
// when linearY), with the repetitions' spread as error bars.
func (f *figures) seriesChart(title, xLabel, yLabel string, series map[string][]analysis.ScalePoint, linearY bool) ([]byte, error) {
	p := newPlot(title, xLabel, yLabel)
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, readableLogTicks
	if !linearY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, readableLogTicks
	} else {
		p.Y.Tick.Marker = readableTicks
	}
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	lines := 0
	for _, c := range f.locks(scale) {
		pts := series[c]
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, pt := range pts {
			if !linearY && pt.Y <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
			errs = append(errs, struct{ Low, High float64 }{pt.Y - pt.Lo, pt.Hi - pt.Y})
			xlo, xhi = math.Min(xlo, pt.X), math.Max(xhi, pt.X)
			ylo, yhi = math.Min(ylo, pt.Lo), math.Max(yhi, pt.Hi)
		}
		if len(xys) == 0 {
			continue
		}
		l, dots, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		l.LineStyle = f.lineStyle(c)
		dots.GlyphStyle = f.glyphStyle(c)
		eb := &plotter.YErrorBars{XYs: xys, YErrors: errs, LineStyle: l.LineStyle}
		eb.LineStyle.Dashes = nil
		p.Add(l, dots, eb)
		p.Legend.Add(c, l, dots)
		lines++
	}
	if lines == 0 {
		return nil, nil
	}
	logRange(&p.X, xlo, xhi)
	if linearY {
		p.Y.Min = math.Min(0, ylo)
	} else {
		logRange(&p.Y, math.Max(ylo, yhi/1e6), yhi)
	}
	return svgOf(p)
}

func (f *figures) scaleSection(d *document) error {
	type chartSpec struct {
		name, title, yLabel, caption string
		load                         string
		x, metric                    results.MetricSpec
		linearY                      bool
	}
	charts := []chartSpec{
		{"scale-memory", "Server memory per idle session", "bytes per session (log scale)",
			"Server memory above the empty server per idle session, against the sessions at the long lease; error bars span the repetitions.",
			results.LoadIdle, results.ScaleMetrics.Sessions, results.ScaleMetrics.ServerBytesPerSession, false},
		{"scale-ops", "Coordinator commands per second, idle holders", "commands/s (log scale)",
			"Coordinator commands/s while C sessions held a lock each (their keep-alives).",
			results.LoadIdle, results.ScaleMetrics.Sessions, results.ScaleMetrics.ServerOpsPerSec, false},
		{"scale-cpu", "Coordinator CPU, idle holders", "server CPU (ms per second)",
			"Server CPU per second while C sessions held a lock each: the cost of keep-alives.",
			results.LoadIdle, results.ScaleMetrics.Sessions, results.ScaleMetrics.ServerCPUMsPerSec, true},
		{"scale-queue-polling", "Polling: coordinator commands/s of the waiting", "commands/s other than keep-alives",
			"Coordinator commands/s other than keep-alives while N clients waited on one held lock: polling, which grows with N; silent waiters stay at 0.",
			results.LoadQueue, results.ScaleMetrics.Depth, results.ScaleMetrics.WaitingOpsPerSec, true},
		{"scale-queue-keepalives", "Keep-alives while clients wait", "keep-alives/s",
			"Keep-alives/s while N clients waited on one held lock, apart from any polling.",
			results.LoadQueue, results.ScaleMetrics.Depth, results.ScaleMetrics.HeartbeatsPerSec, true},
		{"scale-promotion", "Promotion latency against queue depth", "release → next grant, p50 (" + axisUnit(results.ScaleMetrics.PromotionP50.Unit) + ", log scale)",
			"Release of the holder to the grant of the next waiter at the front of a queue of N (median of the trials).",
			results.LoadQueue, results.ScaleMetrics.Depth, results.ScaleMetrics.PromotionP50, false},
	}
	xLabels := map[string]string{results.ScaleMetrics.Sessions.Name: "sessions C (log scale)", results.ScaleMetrics.Depth.Name: "waiters N (log scale)"}
	var drawn []chart
	for _, c := range charts {
		svg, err := f.seriesChart(c.title, xLabels[c.x.Name], c.yLabel,
			f.a.ScaleSeries(c.load, c.x, c.metric), c.linearY)
		if err != nil {
			return err
		}
		if svg != nil {
			drawn = append(drawn, chart{name: c.name, caption: c.caption, svg: svg})
		}
	}
	firstChart(d, "Scale: the other charts", drawn)
	f.scaleLoad(d)
	d.details("Scale: slopes for extrapolating, the short lease, the limits of this machine", func(d *document) {
		f.scaleSlopes(d)
		f.scaleShortLease(d)
		f.scaleLimits(d)
	})
	return nil
}

// scaleSlopes fits the memory and CPU of the idle holders at the long
// lease against their count.
func (f *figures) scaleSlopes(d *document) {
	var parts []string
	for _, sl := range f.a.ScaleSlopes() {
		var fs []string
		switch {
		case sl.Counts > 0 && sl.MemoryFitted:
			fs = append(fs, fmt.Sprintf("memory %s bytes per session (slope over %d counts)", results.Num(sl.BytesPerSession), sl.Counts))
		case sl.Counts > 0:
			fs = append(fs, fmt.Sprintf("memory %s bytes per session at C = %s", results.Num(sl.BytesPerSession), results.Num(sl.AtSessions)))
		}
		if sl.CPUFitted {
			fs = append(fs, fmt.Sprintf("CPU %s ms/s per 1,000 sessions, so 100,000 sessions would take %s ms/s (%.0f%% of 2 cores) by this slope", results.Num(sl.CPUPer1k), results.Num(sl.CPUAt100k), sl.CPUAt100k/20))
		}
		if len(fs) > 0 {
			parts = append(parts, sl.Contender+": "+strings.Join(fs, "; "))
		}
	}
	if len(parts) > 0 {
		d.p("Slopes at the long lease, fitted across the idle session counts, for extrapolating beyond what this machine allows: " + strings.Join(parts, ". ") + ".")
	}
}

// scaleShortLease says, per idle variant at a short lease, how many
// sessions each contender still held and what the keep-alives cost the
// server and the bench, per second and per keep-alive: the bench's clients
// share the cores, so the two together bound the sessions a lease can
// keep.
func (f *figures) scaleShortLease(d *document) {
	var parts []string
	for _, sl := range f.a.ScaleShortLeases() {
		var cs []string
		for _, l := range sl.Locks {
			s := fmt.Sprintf("%s %s of %s", l.Contender, results.Num(l.Held.Median), results.Num(l.Opened.Median))
			if l.ServerCPU != nil {
				s += fmt.Sprintf(" (server %s ms/s", results.Num(l.ServerCPU.Median))
				if l.BenchCPU != nil {
					s += fmt.Sprintf(", bench %s ms/s", results.Num(l.BenchCPU.Median))
				}
				if l.ServerPerKeepAlive != nil {
					s += fmt.Sprintf("; per keep-alive server %s µs, bench %s µs", results.Num(l.ServerPerKeepAlive.Median), results.Num(l.BenchPerKeepAlive.Median))
				}
				s += ")"
			}
			cs = append(cs, s)
		}
		parts = append(parts, sl.Variant+": "+strings.Join(cs, ", "))
	}
	if len(parts) > 0 {
		d.p("Idle holders at the short lease, sessions still held after the window of those opened, with the CPU per second of the servers and of the bench (its clients send the keep-alives on the same 2 cores): " + strings.Join(parts, "; ") + ".")
	}
}

// scaleLoad says how the waiting load and the promotions compare at the
// deepest queue, and where polling contenders saturated.
func (f *figures) scaleLoad(d *document) {
	q := f.a.ScaleQueue()
	if q.Variant == "" {
		return
	}
	s := fmt.Sprintf("Reading (%s, %s waiters on one lock): commands/s beyond keep-alives while they wait: %s.", q.Variant, results.Num(q.Depth), quotedList(q.Waiting))
	if line := rankingLine(q.Promotion); line != "" {
		s += " Promotion p50, fastest first: " + line + "."
	}
	var ratios []string
	for _, r := range q.Promotions {
		ratios = append(ratios, fmt.Sprintf("%s %s at depth %s", r.Contender, results.Ratio(r.AtDepth, r.AtFirst), results.Num(r.Deepest)))
	}
	d.p(s)
	if len(ratios) > 0 {
		slices.Sort(ratios)
		d.details("Scale: promotion at the deepest queue against depth 1", func(d *document) {
			d.p("Promotion p50 at the deepest queue against depth 1 (target: within 2× for a lock that pushes promotions to its queue): " + strings.Join(ratios, ", ") + ".")
		})
	}
}

// scaleLimits states the limits the run recorded (the variants they
// stopped say so under their tables).
func (f *figures) scaleLimits(d *document) {
	if l, ok := f.a.Limits(); ok {
		d.p(fmt.Sprintf("Limits of this run: RLIMIT_NOFILE %d (hard %d) in the bench process, %d in the server process; the largest C both hold is %d (idle-max). Ephemeral ports %d–%d; connections per (source, destination) address pair at most %d; host sysctls are read and never changed.",
			l.NofileBenchSoft, l.NofileBenchHard, l.NofileServerSoft, l.MaxSessions, l.PortLow, l.PortHigh, l.ConnsPerPair))
	}
}
