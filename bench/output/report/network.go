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
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A run under several network profiles (results.Networks) gets a section
// that puts the deciding figures side by side per profile, against the
// round trip each profile measured; the other sections read the first
// profile only (Results.FirstNetwork).

// profileRun is one profile of the run as the analysis reads it, and
// its figures laid out as if it had run under it alone.
type profileRun struct {
	analysis.ProfileRun
	f *figures
}

func networkRuns(r *results.Results) []profileRun {
	var out []profileRun
	for _, pr := range analysis.Profiles(r) {
		out = append(out, profileRun{pr, figuresOf(pr.Run)})
	}
	return out
}

// networkSection renders the section when the run measured more than one
// profile or a profile other than loopback: the main report gets the
// targets, one row per profile and the deciding figures; every path, the
// line per contender and every claim go to the details.
func networkSection(d *document, r *results.Results) error {
	runs := networkRuns(r)
	if len(runs) == 0 {
		return nil
	}
	d.h2("Network profiles")
	names := make([]string, len(runs))
	for i, pr := range runs {
		names[i] = pr.Network.Profile
	}
	d.p(fmt.Sprintf("Measured under %s. Under a profile other than loopback every server ran on an emulated host of its own, a network namespace joined to the bench's clients (on a host of their own) through a userspace delay line that holds every packet, SYN and FIN included, for the profile's one-way delay; cluster members reach each other through it too. The other sections show the first profile (%s); variants under a profile are named variant@profile in results.json.",
		strings.Join(names, ", "), names[0]))
	as := make([]analysis.ProfileRun, len(runs))
	for i, pr := range runs {
		as[i] = pr.ProfileRun
	}
	targetsTable(d, analysis.NetworkTargets(r, as))
	roundTrips(d, runs)
	lineCost(d, r, runs)
	if err := acquireAgainstRTT(d, runs); err != nil {
		return err
	}
	throughputPerProfile(d, runs)
	perProfileTable(d, runs, "Handover after a graceful release", "handover", func(pr profileRun) analysis.FigureColumn { return pr.Handover().AfterRelease },
		"Median handover after release, the holder's release to the waiter's grant; a release and a grant each cross the path.")
	failuresPerProfile(d, runs)
	claimsPerProfile(d, r, runs)
	d.details("Network: every measured path", func(d *document) { askedVsMeasured(d, runs) })
	return nil
}

func usText(v float64) string { return results.Format(v, "us") }

// roundTrips gives one row per profile: the asked round trip, what the
// paths measured, and what the line subtracted for its own cost.
func roundTrips(d *document, runs []profileRun) {
	t := table{head: []string{"profile", "asked RTT", "measured RTT p50 (paths' median, range)", "measured / asked", "connect p50", "subtracted (rounds; uncompensated RTT p50)", "line at 0 ms (direct)"}}
	for _, pr := range runs {
		nr := pr.Network
		var rtts, connects []float64
		for _, p := range nr.Paths {
			if p.RTT.N > 0 {
				rtts = append(rtts, p.RTT.P50)
			}
			if p.Connect.N > 0 {
				connects = append(connects, p.Connect.P50)
			}
		}
		asked, measured, share, sub, own := "none (loopback)", "–", "–", "–", "–"
		if nr.Label() != "" {
			asked = usText(nr.AskedRTTUS)
			if nr.JitterUS > 0 {
				asked += " ± " + usText(nr.JitterUS)
			}
			if nr.Loss > 0 {
				asked += fmt.Sprintf(", loss %s%%", results.Num(100*nr.Loss))
			}
			if nr.UncompensatedRTT.N > 0 { // runs before the compensation subtracted the line at 0 ms
				r := nr.CompensationRounds
				sub = fmt.Sprintf("%s (rounds %s–%s; uncompensated %s)", usText(nr.CompensationUS), usText(r.Min), usText(r.Max), usText(nr.UncompensatedRTT.P50))
			}
			own = usText(nr.LineOwnRTTUS) + " (" + usText(nr.DirectRTTUS) + ")"
		}
		if len(rtts) > 0 {
			measured = fmt.Sprintf("%s (%s–%s), %d paths", usText(median(rtts)), usText(slices.Min(rtts)), usText(slices.Max(rtts)), len(rtts))
		}
		if rs := analysis.PathRatios(nr); len(rs) > 0 {
			share = fmt.Sprintf("%s (%s–%s)", results.Ratio(median(rs), 1), results.Ratio(slices.Min(rs), 1), results.Ratio(slices.Max(rs), 1))
		}
		conn := "–"
		if len(connects) > 0 {
			conn = usText(median(connects))
		}
		t.rows = append(t.rows, []cell{{text: nr.Profile}, {text: asked}, {text: measured}, {text: share}, {text: conn}, {text: sub}, {text: own}})
	}
	d.h3("Asked and measured round trips")
	d.p("Measured before the scenarios ran, per path (the bench to each server, a cluster's first member to the others): TCP ping-pong of 16 bytes to an echo listener on the server's host, and TCP connects to the server's port (on loopback only connects). " +
		"Through a link that holds packets both ends and the line sleep while a packet waits, and their wake-ups add to every round trip, more the longer they sleep; so the line measures, per asked RTT, round trips through a link holding exactly half of it each way (uncompensated) and subtracts their excess. " +
		"The line at 0 ms is its own round trip through a link that holds nothing, against the direct path: the smallest RTT it can emulate. Every path: see the details.")
	d.add(t)
}

// askedVsMeasured lists every measured path: asked round trip, measured
// round trip and connect time with their spread.
func askedVsMeasured(d *document, runs []profileRun) {
	t := table{head: []string{"profile", "path", "asked RTT", "measured RTT p50 (p90; min–max)", "measured/asked", "TCP connect p50 (p90)", "failed samples"}, labels: 2}
	for _, pr := range runs {
		for _, p := range pr.Network.Paths {
			path := "bench → " + p.Server
			if p.From != "" {
				path = p.From + " → " + p.Server
			}
			rtt, share := "–", "–"
			if p.RTT.N > 0 {
				d := results.DisplayFor("us", p.RTT.P50, p.RTT.P90, p.RTT.Min, p.RTT.Max)
				rtt = fmt.Sprintf("%s (%s; %s–%s), n=%d", d.Format(p.RTT.P50), d.Num(p.RTT.P90), d.Num(p.RTT.Min), d.Num(p.RTT.Max), p.RTT.N)
				if p.AskedRTTUS > 0 {
					share = results.Ratio(p.RTT.P50, p.AskedRTTUS)
				}
			}
			asked := "none (loopback)"
			if pr.Network.Label() != "" {
				asked = usText(p.AskedRTTUS)
			}
			cd := results.DisplayFor("us", p.Connect.P50, p.Connect.P90)
			t.rows = append(t.rows, []cell{{text: pr.Network.Profile}, {text: path}, {text: asked}, {text: rtt}, {text: share},
				{text: fmt.Sprintf("%s (%s), n=%d", cd.Format(p.Connect.P50), cd.Num(p.Connect.P90), p.Connect.N)}, {text: results.Num(float64(p.Failed))}})
		}
	}
	if len(t.rows) > 0 {
		d.add(t)
	}
}

// lineCost shows what the delay line cost per profile and, at the
// throughput step with the most workers, whether it set the rate.
func lineCost(d *document, r *results.Results, runs []profileRun) {
	t := table{head: []string{"profile", "packets/s", "line CPU (cores)", "late p50 / p99", "most held", "dropped (loss)", "kernel drops", "at the most workers: cores busy / line / line's share"}}
	var loadRows [][]cell
	for _, pr := range runs {
		l := pr.Network.Line
		if l == nil {
			continue
		}
		atMost := "–"
		if most, loads := pr.LineLoads(); len(loads) > 0 {
			var busy, line, share []float64
			for _, x := range loads {
				busy, line, share = append(busy, x.Busy), append(line, x.Line), append(share, x.Share())
				loadRows = append(loadRows, []cell{{text: pr.Network.Profile}, {text: x.Contender}, {text: results.Num(x.LocksPerSec)}, {text: fmt.Sprintf("%.0f%%", 100*x.Scaling)},
					{text: results.Num(x.PacketsPerSec)}, {text: results.Num(x.Busy)}, {text: results.Num(x.Line)}, {text: fmt.Sprintf("%.0f%%", 100*x.Share())},
					{text: fmt.Sprintf("%s / %s", results.Num(x.LineMsPer1k), results.Num(x.ClientServerPer1k))}, {text: usText(x.LateP99US)}})
			}
			atMost = fmt.Sprintf("%s / %s / %.0f%% (%s)", results.Num(median(busy)), results.Num(median(line)), 100*median(share), most)
		}
		t.rows = append(t.rows, []cell{{text: pr.Network.Profile}, {text: results.Num(l.PacketsPerSec)},
			{text: results.Num(l.CPUCores)}, {text: usText(l.LateP50US) + " / " + usText(l.LateP99US)}, {text: results.Num(float64(l.MaxQueued))},
			{text: fmt.Sprintf("%d (%d)", l.Dropped, l.LossDrops)}, {text: results.Num(float64(l.KernelDrops))}, {text: atMost}})
	}
	if len(t.rows) == 0 {
		return
	}
	d.h3("The emulation's own cost")
	d.p(fmt.Sprintf("The delay line is a child process of the bench; its CPU (about 12 µs a packet, most of it the receiving socket's TCP processing, which on the direct path the sender pays, and its wake-ups) is CPU a real network would not spend, and it is not counted in the scenarios' client CPU. Late is how long after its due time a packet left the line. "+
		"At the throughput step with the most workers, cores busy are the bench's clients, the servers and the line together, of the machine's %d (medians over the contenders; other work on the machine not counted). Where the workers fall well short of the rate one worker reaches alone, the round trip does not bound the step, the CPU does, and the line's share of it is locks/s a real network would leave to the locks (see the targets): compare locks under one profile, not a profile against loopback. Per contender: see the details.",
		r.Environment.Cores))
	d.add(t)
	if len(loadRows) > 0 {
		d.details("Network: the line per contender at the most workers", func(d *document) {
			d.add(table{head: []string{"profile", "contender", "locks/s", "of one worker's rate each", "packets/s", "cores busy", "line (cores)", "line's share", "CPU per 1,000 locks, line / clients + servers (ms)", "late p99"}, labels: 2, rows: loadRows})
		})
	}
}

// acquireVariant is the latency variant the RTT chart reads: one worker,
// so that the figure is one client's round trips.
const acquireVariant = analysis.Uncontended

// acquireAgainstRTT charts the median acquire of every contender against
// the measured RTT of each profile, with one and two round trips drawn as
// the physics any lock on a new or a pooled connection must pay, and
// lists the same figures.
func acquireAgainstRTT(d *document, runs []profileRun) error {
	var contenders []string
	for _, pr := range runs {
		for _, c := range pr.ContendersIn("latency") {
			if !slices.Contains(contenders, c) {
				contenders = append(contenders, c)
			}
		}
	}
	if len(contenders) == 0 {
		return nil
	}
	t := table{head: []string{"contender"}}
	for _, pr := range runs {
		what := "RTT"
		if pr.Network.Label() == "" {
			what = "connect" // loopback measures connects only
		}
		t.head = append(t.head, fmt.Sprintf("%s (%s %s)", pr.Network.Profile, what, usText(pr.RTTUS)))
	}
	p := newPlot("Acquire p50 ("+acquireVariant+") against the measured round trip", "measured RTT, "+axisUnit("us")+" (log scale)", "acquire p50, "+axisUnit("us")+" (log scale)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = readableLogTicks, readableLogTicks
	lo, hi := math.Inf(1), math.Inf(-1)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	style := runs[0].f
	p50 := make([]map[string]results.Row, len(runs))
	for i, pr := range runs {
		p50[i] = measured(pr.OneWorker().AcquireP50)
	}
	for _, c := range contenders {
		row := []cell{{text: c}}
		var xys plotter.XYs
		for i, pr := range runs {
			x, ok := p50[i][c]
			if !ok {
				row = append(row, cell{text: "–"})
				continue
			}
			text := withUnit(x)
			if pr.RTTUS > 0 {
				text += " (" + results.Ratio(x.Median, pr.RTTUS) + " RTT)"
				xys = append(xys, plotter.XY{X: pr.RTTUS, Y: x.Median})
				lo, hi = math.Min(lo, pr.RTTUS), math.Max(hi, pr.RTTUS)
				ylo, yhi = math.Min(ylo, x.Median), math.Max(yhi, x.Median)
			}
			row = append(row, cell{text: text})
		}
		t.rows = append(t.rows, row)
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		l.LineStyle = style.lineStyle(c)
		pts.Color = l.LineStyle.Color
		p.Add(l, pts)
		p.Legend.Add(c, l, pts)
	}
	d.h3("Acquire latency against the round trip")
	d.p("Median acquire of one worker (latency " + acquireVariant + ") under each profile, and as a multiple of the profile's measured RTT (the paths' median; on loopback, their connect). A lock that reuses a pooled connection pays at least one round trip; one that opens a new connection per claim pays the handshake too, at least two. The chart draws both as physics lines.")
	d.add(t)
	if hi <= 0 || math.IsInf(hi, -1) {
		return nil
	}
	for k, name := range []string{"1 RTT", "2 RTT"} {
		line := plotter.XYs{{X: lo, Y: float64(k+1) * lo}, {X: hi, Y: float64(k+1) * hi}}
		l, err := plotter.NewLine(line)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		l.LineStyle = draw.LineStyle{Color: floorGrey[k], Width: vg.Points(1), Dashes: floorDashes[2-k]}
		p.Add(l)
		p.Legend.Add(name, l)
		ylo, yhi = math.Min(ylo, lo), math.Max(yhi, 2*hi)
	}
	logRange(&p.X, lo/1.5, hi*1.5)
	logRange(&p.Y, ylo/1.5, yhi*1.5)
	svg, err := svgOf(p)
	if err != nil {
		return err
	}
	d.add(chart{name: "network-acquire-rtt", caption: "Acquire p50 (" + acquireVariant + ") per contender against each profile's measured RTT (both log scale); grey lines: one and two round trips.", svg: svg})
	return nil
}

// throughputPerProfile lists locks/s at the fewest and the most workers
// on distinct keys per profile, both in one cell.
func throughputPerProfile(d *document, runs []profileRun) {
	first := runs[0]
	fewest, most := first.ThroughputRange()
	if fewest == "" {
		return
	}
	wf, wm := first.ThroughputWorkers(fewest), first.ThroughputWorkers(most)
	atFewest, atMost := make([]map[string]results.Row, len(runs)), make([]map[string]results.Row, len(runs))
	for i, pr := range runs {
		atFewest[i] = measured(pr.Column("throughput", fewest, results.ThroughputMetrics.CyclesPerSec.Name))
		atMost[i] = measured(pr.Column("throughput", most, results.ThroughputMetrics.CyclesPerSec.Name))
	}
	rows := perProfileRows(runs, "throughput", func(i int, c string) (string, bool) {
		a, oka := atFewest[i][c]
		b, okb := atMost[i][c]
		if !oka && !okb {
			return "", false
		}
		cell := func(x results.Row, ok bool) string {
			if !ok {
				return "–"
			}
			return spread(x, rowDisplay(x))
		}
		return cell(a, oka) + " / " + cell(b, okb), true
	})
	if len(rows) == 0 {
		return
	}
	d.h3("Locks per second")
	d.p(fmt.Sprintf("Completed short locks per second on distinct keys with %d / %d worker(s) (%s / %s). A worker's rate is bounded by its round trips, so it falls as the RTT grows unless the lock needs fewer of them; at %d workers the machine's CPU bounds it too (see the emulation's own cost). Under a profile the window lasts at least 100 round trips.", wf, wm, fewest, most, wm))
	d.add(profileTable(runs, rows))
}

// perProfileTable shows one figure of a scenario per contender, a column
// per profile (column reads a profile's), each cell with its unit.
func perProfileTable(d *document, runs []profileRun, title, scenario string, column func(profileRun) analysis.FigureColumn, text string) {
	figures := make([]map[string]results.Row, len(runs))
	for i, pr := range runs {
		figures[i] = measured(column(pr))
	}
	rows := perProfileRows(runs, scenario, func(i int, c string) (string, bool) {
		x, ok := figures[i][c]
		if !ok {
			return "", false
		}
		return withUnit(x), true
	})
	if len(rows) == 0 {
		return
	}
	d.h3(title)
	d.p(text)
	d.add(profileTable(runs, rows))
}

// perProfileRows gives a row per contender of the scenario that has a
// figure under some profile (figure reads the i-th profile's), a cell
// per profile ("–" where it has none);
// none when fewer than two profiles have a figure: there is nothing to
// compare, and the scenario's own section shows the one profile.
func perProfileRows(runs []profileRun, scenario string, figure func(int, string) (string, bool)) [][]cell {
	var contenders []string
	profiles := 0
	for i, pr := range runs {
		measured := false
		for _, c := range pr.ContendersIn(scenario) {
			if _, ok := figure(i, c); ok {
				measured = true
				if !slices.Contains(contenders, c) {
					contenders = append(contenders, c)
				}
			}
		}
		if measured {
			profiles++
		}
	}
	if profiles < 2 {
		return nil
	}
	var rows [][]cell
	for _, c := range contenders {
		row := []cell{{text: c}}
		for i := range runs {
			text, ok := figure(i, c)
			if !ok {
				text = "–"
			}
			row = append(row, cell{text: text})
		}
		rows = append(rows, row)
	}
	return rows
}

func profileTable(runs []profileRun, rows [][]cell) table {
	t := table{head: []string{"contender"}, rows: rows}
	for _, pr := range runs {
		t.head = append(t.head, pr.Network.Profile)
	}
	return t
}

// withUnit is a figure's median (and range) with its unit: profiles put
// figures of very different magnitudes side by side.
func withUnit(x results.Row) string {
	d := rowDisplay(x)
	if d.Unit == "" || d.Unit == "/s" {
		return spread(x, d)
	}
	return spread(x, d) + " " + d.Unit
}

// failuresPerProfile shows acquires that failed and the acquire tail per
// contender under each profile: what jitter and loss do to a lock that
// waits for several servers.
func failuresPerProfile(d *document, runs []profileRun) {
	t := table{head: []string{"contender"}}
	for _, pr := range runs {
		t.head = append(t.head, pr.Network.Profile+" p99 / failed")
	}
	var contenders []string
	p99s, fails := make([]map[string]results.Row, len(runs)), make([]map[string]results.Row, len(runs))
	for i, pr := range runs {
		one := pr.OneWorker()
		p99s[i], fails[i] = measured(one.AcquireP99), measured(one.Failures)
		for _, c := range pr.ContendersIn("latency") {
			if !slices.Contains(contenders, c) {
				contenders = append(contenders, c)
			}
		}
	}
	for _, c := range contenders {
		row := []cell{{text: c}}
		for i := range runs {
			p99, ok := p99s[i][c]
			failed, fok := fails[i][c]
			switch {
			case ok && fok:
				row = append(row, cell{text: usText(p99.Median) + " / " + results.Num(failed.Median)})
			case ok:
				row = append(row, cell{text: usText(p99.Median) + " / –"})
			default:
				row = append(row, cell{text: "–"})
			}
		}
		t.rows = append(t.rows, row)
	}
	if len(t.rows) == 0 {
		return
	}
	var shaped []string
	for _, pr := range runs {
		if pr.Network.JitterUS > 0 || pr.Network.Loss > 0 {
			shaped = append(shaped, fmt.Sprintf("%s (jitter ±%s, loss %s%%)", pr.Network.Profile, usText(pr.Network.JitterUS), results.Num(100*pr.Network.Loss)))
		}
	}
	d.h3("Acquire tail and failures under jitter and loss")
	text := "Acquire p99 and failed acquires of one worker (latency " + acquireVariant + ") per profile. A lock that needs a majority of several servers waits for the slowest of them, so jitter widens its tail and a lost packet costs it a retransmission or a failed attempt."
	if len(shaped) > 0 {
		text += " Profiles with jitter or loss: " + strings.Join(shaped, ", ") + "."
	} else {
		text += " No profile of this run had jitter or loss."
	}
	d.p(text)
	d.add(t)
}

// median is the median of v, 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
