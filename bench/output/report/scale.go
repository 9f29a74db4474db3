package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench/results"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// The scale section: memory, coordinator load and CPU against the number
// of sessions, promotion latency against queue depth, the slopes a reader
// can extrapolate with, and why larger counts were skipped.

const scale = "scale"

// point is one figure of a contender at x sessions (or queue depth).
type point struct{ x, y, lo, hi float64 }

// scaleSeries collects, per contender, the figure metric of the variants
// of one load (results.LoadIdle, LoadQueue) at its longest lease against
// the x metric of the same variant.
func (f *figures) scaleSeries(load, xMetric, metric string) map[string][]point {
	out := map[string][]point{}
	long := f.longestLease(load)
	for _, c := range f.locks(scale) {
		for _, v := range f.variants(scale) {
			if p := f.params(scale, v); p.Load != load || p.Lease != long {
				continue
			}
			x, okx := f.row(scale, c, v, xMetric)
			y, oky := f.row(scale, c, v, metric)
			if !okx || !oky || x.Median <= 0 {
				continue
			}
			out[c] = append(out[c], point{x.Median, y.Median, y.Min, y.Max})
		}
		slices.SortFunc(out[c], func(a, b point) int { return int(a.x - b.x) })
	}
	return out
}

// longestLease returns the longest lease among the scale variants of a
// load, as recorded ("30s"); "" when none records one.
func (f *figures) longestLease(load string) string {
	best, bestD := "", time.Duration(-1)
	for _, v := range f.variants(scale) {
		p := f.params(scale, v)
		d, err := time.ParseDuration(p.Lease)
		if p.Load == load && err == nil && d > bestD {
			best, bestD = p.Lease, d
		}
	}
	return best
}

// seriesChart draws one line per contender on log-scaled axes (y linear
// when linearY), with the repetitions' spread as error bars.
func (f *figures) seriesChart(title, xLabel, yLabel string, series map[string][]point, linearY bool) ([]byte, error) {
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
			if !linearY && pt.y <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.x, Y: pt.y})
			errs = append(errs, struct{ Low, High float64 }{pt.y - pt.lo, pt.hi - pt.y})
			xlo, xhi = math.Min(xlo, pt.x), math.Max(xhi, pt.x)
			ylo, yhi = math.Min(ylo, pt.lo), math.Max(yhi, pt.hi)
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

// line is a least-squares fit y = a + b·x.
type line struct{ a, b float64 }

func fitLine(pts []point) (line, bool) {
	if len(pts) < 2 {
		return line{}, false
	}
	var mx, my float64
	for _, p := range pts {
		mx += p.x
		my += p.y
	}
	n := float64(len(pts))
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for _, p := range pts {
		sxx += (p.x - mx) * (p.x - mx)
		sxy += (p.x - mx) * (p.y - my)
	}
	if sxx == 0 {
		return line{}, false
	}
	b := sxy / sxx
	return line{my - b*mx, b}, true
}

func (f *figures) scaleSection(d *document) error {
	type chartSpec struct {
		name, title, yLabel, caption string
		load, x, metric              string
		linearY                      bool
	}
	charts := []chartSpec{
		{"scale-memory", "Server memory per idle session", "bytes per session (log scale)",
			"Server memory above the empty server per idle session, against the sessions at the long lease; error bars span the repetitions.",
			results.LoadIdle, results.ScaleMetrics.Sessions.Name, results.ScaleMetrics.ServerBytesPerSession.Name, false},
		{"scale-ops", "Coordinator commands per second, idle holders", "commands/s (log scale)",
			"Coordinator commands/s while C sessions held a lock each (their keep-alives).",
			results.LoadIdle, results.ScaleMetrics.Sessions.Name, results.ScaleMetrics.ServerOpsPerSec.Name, false},
		{"scale-cpu", "Coordinator CPU, idle holders", "server CPU (ms per second)",
			"Server CPU per second while C sessions held a lock each: the cost of keep-alives.",
			results.LoadIdle, results.ScaleMetrics.Sessions.Name, results.ScaleMetrics.ServerCPUMsPerSec.Name, true},
		{"scale-queue-polling", "Polling: coordinator commands/s of the waiting", "commands/s other than keep-alives",
			"Coordinator commands/s other than keep-alives while N clients waited on one held lock: polling, which grows with N; silent waiters stay at 0.",
			results.LoadQueue, results.ScaleMetrics.Depth.Name, results.ScaleMetrics.WaitingOpsPerSec.Name, true},
		{"scale-queue-keepalives", "Keep-alives while clients wait", "keep-alives/s",
			"Keep-alives/s while N clients waited on one held lock, apart from any polling.",
			results.LoadQueue, results.ScaleMetrics.Depth.Name, results.ScaleMetrics.HeartbeatsPerSec.Name, true},
		{"scale-promotion", "Promotion latency against queue depth", "release → next grant, p50 (" + axisUnit(results.ScaleMetrics.PromotionP50.Unit) + ", log scale)",
			"Release of the holder to the grant of the next waiter at the front of a queue of N (median of the trials).",
			results.LoadQueue, results.ScaleMetrics.Depth.Name, results.ScaleMetrics.PromotionP50.Name, false},
	}
	xLabels := map[string]string{results.ScaleMetrics.Sessions.Name: "sessions C (log scale)", results.ScaleMetrics.Depth.Name: "waiters N (log scale)"}
	var drawn []chart
	for _, c := range charts {
		svg, err := f.seriesChart(c.title, xLabels[c.x], c.yLabel,
			f.scaleSeries(c.load, c.x, c.metric), c.linearY)
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
	for _, c := range f.locks(scale) {
		mem := f.scaleSeries(results.LoadIdle, results.ScaleMetrics.Sessions.Name, results.ScaleMetrics.ServerBytesPerSession.Name)[c]
		cpu := f.scaleSeries(results.LoadIdle, results.ScaleMetrics.Sessions.Name, results.ScaleMetrics.ServerCPUMsPerSec.Name)[c]
		var fs []string
		if len(mem) > 0 {
			// Total bytes against C: the slope is the bytes per session.
			total := make([]point, len(mem))
			for i, p := range mem {
				total[i] = point{x: p.x, y: p.y * p.x}
			}
			if l, ok := fitLine(total); ok {
				fs = append(fs, fmt.Sprintf("memory %s bytes per session (slope over %d counts)", results.Num(l.b), len(mem)))
			} else {
				fs = append(fs, fmt.Sprintf("memory %s bytes per session at C = %s", results.Num(mem[0].y), results.Num(mem[0].x)))
			}
		}
		if l, ok := fitLine(cpu); ok {
			at := l.a + l.b*100000
			fs = append(fs, fmt.Sprintf("CPU %s ms/s per 1,000 sessions, so 100,000 sessions would take %s ms/s (%.0f%% of 2 cores) by this slope", results.Num(l.b*1000), results.Num(at), at/20))
		}
		if len(fs) > 0 {
			parts = append(parts, c+": "+strings.Join(fs, "; "))
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
	for _, v := range f.variants(scale) {
		if p := f.params(scale, v); p.Load != results.LoadIdle || p.Lease == f.longestLease(results.LoadIdle) {
			continue
		}
		var cs []string
		for _, c := range f.locks(scale) {
			held, ok := f.row(scale, c, v, results.ScaleMetrics.SessionsReached.Name)
			all, okAll := f.row(scale, c, v, results.ScaleMetrics.Sessions.Name)
			if !ok || !okAll {
				continue
			}
			s := fmt.Sprintf("%s %s of %s", c, results.Num(held.Median), results.Num(all.Median))
			if srv, ok := f.row(scale, c, v, results.ScaleMetrics.ServerCPUMsPerSec.Name); ok {
				s += fmt.Sprintf(" (server %s ms/s", results.Num(srv.Median))
				if b, ok := f.row(scale, c, v, results.ScaleMetrics.BenchCPUMsPerSec.Name); ok {
					s += fmt.Sprintf(", bench %s ms/s", results.Num(b.Median))
				}
				srvKA, okS := f.row(scale, c, v, results.ScaleMetrics.ServerCPUUsPerHeartbeat.Name)
				cliKA, okC := f.row(scale, c, v, results.ScaleMetrics.ClientCPUUsPerHeartbeat.Name)
				if okS && okC {
					s += fmt.Sprintf("; per keep-alive server %s µs, bench %s µs", results.Num(srvKA.Median), results.Num(cliKA.Median))
				}
				s += ")"
			}
			cs = append(cs, s)
		}
		if len(cs) > 0 {
			parts = append(parts, v+": "+strings.Join(cs, ", "))
		}
	}
	if len(parts) > 0 {
		d.p("Idle holders at the short lease, sessions still held after the window of those opened, with the CPU per second of the servers and of the bench (its clients send the keep-alives on the same 2 cores): " + strings.Join(parts, "; ") + ".")
	}
}

// scaleLoad says how the waiting load and the promotions compare at the
// deepest queue, and where polling contenders saturated.
func (f *figures) scaleLoad(d *document) {
	deepest := ""
	depth := 0.0
	for _, v := range f.variants(scale) {
		if f.params(scale, v).Load != results.LoadQueue {
			continue
		}
		for _, c := range f.locks(scale) {
			if x, ok := f.row(scale, c, v, results.ScaleMetrics.Depth.Name); ok && x.Median > depth {
				deepest, depth = v, x.Median
			}
		}
	}
	if deepest == "" {
		return
	}
	s := fmt.Sprintf("Reading (%s, %s waiters on one lock): commands/s beyond keep-alives while they wait: %s.", deepest, results.Num(depth),
		f.listFigures(scale, deepest, results.ScaleMetrics.WaitingOpsPerSec.Name, f.locks(scale)))
	if line, _ := f.ranked(scale, deepest, results.ScaleMetrics.PromotionP50.Name, f.locks(scale), false); line != "" {
		s += " Promotion p50, fastest first: " + line + "."
	}
	var ratios []string
	for c, pts := range f.scaleSeries(results.LoadQueue, results.ScaleMetrics.Depth.Name, results.ScaleMetrics.PromotionP50.Name) {
		if len(pts) > 1 && pts[0].x == 1 && pts[0].y > 0 {
			last := pts[len(pts)-1]
			ratios = append(ratios, fmt.Sprintf("%s %s at depth %s", c, results.Ratio(last.y, pts[0].y), results.Num(last.x)))
		}
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
	var limits string
	for _, x := range f.r.Raw {
		if x.Scenario != scale {
			continue
		}
		if limits == "" && x.Counts["nofile_bench_soft"] > 0 {
			c := x.Counts
			limits = fmt.Sprintf("Limits of this run: RLIMIT_NOFILE %d (hard %d) in the bench process, %d in the server process; the largest C both hold is %d (idle-max). Ephemeral ports %d–%d; connections per (source, destination) address pair at most %d; host sysctls are read and never changed.",
				c["nofile_bench_soft"], c["nofile_bench_hard"], c["nofile_server1_soft"], c["max_sessions"], c["port_range_low"], c["port_range_high"], c["conns_per_pair"])
		}
	}
	if limits != "" {
		d.p(limits)
	}
}
