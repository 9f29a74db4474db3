package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/output/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A run under several network profiles (results.Networks) gets a section
// that puts the deciding figures side by side per profile, against the
// round trip each profile measured; the other sections read the first
// profile only (Results.FirstNetwork).

// profileRun is one profile of the run: its record and the run as if it
// had run under it alone.
type profileRun struct {
	nr  results.NetworkRun
	f   *figures
	rtt float64 // measured bench-to-server round trip, µs (0: unmeasured)
}

func networkRuns(r *results.Results) []profileRun {
	var out []profileRun
	for _, nr := range r.Networks {
		out = append(out, profileRun{nr: nr, f: newFigures(r.UnderNetwork(nr.Label())), rtt: measuredRTT(nr)})
	}
	return out
}

// measuredRTT is the median over the bench's paths of their round-trip
// p50 (or, where no round trip was measured, as on loopback, their
// connect p50: one round trip and an accept).
func measuredRTT(nr results.NetworkRun) float64 {
	var v []float64
	for _, p := range nr.Paths {
		switch {
		case p.From != "":
		case p.RTT.N > 0:
			v = append(v, p.RTT.P50)
		case p.Connect.N > 0:
			v = append(v, p.Connect.P50)
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// networkSection renders the section when the run measured more than one
// profile or a profile other than loopback.
func networkSection(d *document, r *results.Results) error {
	runs := networkRuns(r)
	if len(runs) == 0 {
		return nil
	}
	d.h2("Network profiles")
	names := make([]string, len(runs))
	for i, pr := range runs {
		names[i] = pr.nr.Profile
	}
	d.p(fmt.Sprintf("The run measured its scenarios under %d network profile(s): %s. Under a profile other than loopback every server ran on an emulated host of its own behind a userspace delay line that holds every packet for the profile's one-way delay. "+
		"The other sections show the first profile (%s); this one compares them (variants under a profile are named variant@profile in results.json).",
		len(runs), strings.Join(names, ", "), names[0]))
	roundTrips(d, runs)
	if err := acquireAgainstRTT(d, runs); err != nil {
		return err
	}
	claimsChanged(d, r, runs)
	d.details("Network: every path measured, the emulation's cost, locks/s, handover, the acquire tail and every claim per profile", func(d *document) {
		askedVsMeasured(d, runs)
		lineCostTable(d, runs)
		throughputPerProfile(d, runs)
		perProfileTable(d, runs, "Handover after a graceful release", "handover", "graceful", "p50",
			"Median handover after release, the holder's release to the waiter's grant; a release and a grant each cross the path.")
		failuresPerProfile(d, runs)
		claimsPerProfile(d, r, runs)
	})
	return nil
}

// roundTrips sums up per profile what was asked and measured over the
// bench's paths: the median of their round-trip p50s, and the range of
// measured/asked.
func roundTrips(d *document, runs []profileRun) {
	t := table{head: []string{"profile", "asked RTT", "measured RTT (median of the paths' p50)", "measured/asked (range over the paths)", "paths"}}
	for _, pr := range runs {
		asked, share := "none (loopback)", "–"
		if pr.nr.Label() != "" {
			asked = usText(pr.nr.AskedRTTUS)
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, p := range pr.nr.Paths {
				if p.RTT.N > 0 && p.AskedRTTUS > 0 {
					r := p.RTT.P50 / p.AskedRTTUS
					lo, hi = math.Min(lo, r), math.Max(hi, r)
				}
			}
			if lo <= hi {
				share = ratio(lo, 1) + "–" + ratio(hi, 1)
			}
		}
		measured := "–"
		if pr.rtt > 0 {
			measured = usText(pr.rtt)
		}
		t.rows = append(t.rows, []cell{{text: pr.nr.Profile}, {text: asked}, {text: measured}, {text: share}, {text: fmt.Sprint(len(pr.nr.Paths))}})
	}
	d.p("Round trips measured before the scenarios ran (TCP ping-pong to the server's host; on loopback, TCP connects), the line's own round trip subtracted from the asked one:")
	d.add(t)
}

// claimsChanged lists the claims whose verdict differs between two
// profiles that both decided it (holds under one, fails under another).
func claimsChanged(d *document, r *results.Results, runs []profileRun) {
	if len(r.Claims) == 0 || len(runs) < 2 {
		return
	}
	per := make([][]Claim, len(runs))
	for i, pr := range runs {
		per[i] = Check(r.UnderNetwork(pr.nr.Label()))
	}
	t := table{head: []string{"about", "claim"}, labels: 2}
	for _, pr := range runs {
		t.head = append(t.head, pr.nr.Profile)
	}
	for j := range per[0] {
		var decided []Verdict
		row := []cell{{text: per[0][j].subject}, {text: per[0][j].Claim}}
		for i := range runs {
			c := per[i][j]
			row = append(row, shownVerdict(c))
			if c.Verdict != Inconclusive && !slices.Contains(decided, c.Verdict) {
				decided = append(decided, c.Verdict)
			}
		}
		if len(decided) > 1 {
			t.rows = append(t.rows, row)
		}
	}
	if len(t.rows) == 0 {
		d.p("No claim holds under one profile and fails under another.")
		return
	}
	d.p("The claims that hold under one profile and fail under another (every claim per profile is in the appendix):")
	d.add(t)
}

func usText(v float64) string { return results.Format(v, "us") }

// askedVsMeasured lists every measured path: asked round trip, measured
// round trip and connect time with their spread.
func askedVsMeasured(d *document, runs []profileRun) {
	t := table{head: []string{"profile", "path", "asked RTT", "measured RTT p50 (p90; min–max)", "measured/asked", "TCP connect p50 (p90)", "failed samples"}, labels: 2}
	for _, pr := range runs {
		for _, p := range pr.nr.Paths {
			path := "bench → " + p.Server
			if p.From != "" {
				path = p.From + " → " + p.Server
			}
			rtt, share := "–", "–"
			if p.RTT.N > 0 {
				d := results.DisplayFor("us", p.RTT.P50, p.RTT.P90, p.RTT.Min, p.RTT.Max)
				rtt = fmt.Sprintf("%s (%s; %s–%s), n=%d", d.Format(p.RTT.P50), d.Num(p.RTT.P90), d.Num(p.RTT.Min), d.Num(p.RTT.Max), p.RTT.N)
				if p.AskedRTTUS > 0 {
					share = ratio(p.RTT.P50, p.AskedRTTUS)
				}
			}
			asked := "none (loopback)"
			if pr.nr.Label() != "" {
				asked = usText(p.AskedRTTUS)
			}
			t.rows = append(t.rows, []cell{{text: pr.nr.Profile}, {text: path}, {text: asked}, {text: rtt}, {text: share},
				{text: fmt.Sprintf("%s (%s), n=%d", results.DisplayFor("us", p.Connect.P50, p.Connect.P90).Format(p.Connect.P50), results.DisplayFor("us", p.Connect.P50, p.Connect.P90).Num(p.Connect.P90), p.Connect.N)}, {text: results.Num(float64(p.Failed))}})
		}
	}
	if len(t.rows) == 0 {
		return
	}
	d.h3("Asked and measured round trips")
	d.p("Measured before the scenarios ran: TCP ping-pong of 16 bytes on one connection to an echo listener on the server's host, and TCP connects to the server's own port, from the bench (or from the first member of a cluster to the others). On loopback only connects are measured. The line's own round trip is subtracted from every asked RTT, so measured/asked near 1 means the profile was met at the median.")
	d.add(t)
}

// lineCostTable shows what the delay line cost per profile: bench CPU a
// real network would not spend, and whether it queued.
func lineCostTable(d *document, runs []profileRun) {
	t := table{head: []string{"profile", "line's own RTT", "packets/s", "line CPU (cores)", "late p50 / p99", "most held", "dropped (of which loss)", "kernel drops"}}
	for _, pr := range runs {
		l := pr.nr.Line
		if l == nil {
			continue
		}
		t.rows = append(t.rows, []cell{{text: pr.nr.Profile}, {text: usText(pr.nr.LineOwnRTTUS)}, {text: results.Num(l.PacketsPerSec)},
			{text: results.Num(l.CPUCores)}, {text: usText(l.LateP50US) + " / " + usText(l.LateP99US)}, {text: results.Num(float64(l.MaxQueued))},
			{text: fmt.Sprintf("%d (%d)", l.Dropped, l.LossDrops)}, {text: results.Num(float64(l.KernelDrops))}})
	}
	if len(t.rows) == 0 {
		return
	}
	d.h3("The emulation's own cost")
	d.p("The delay line is a child process of the bench: its CPU is bench CPU that a real network would not spend (it is not counted in the scenarios' client CPU). Late is how long after its due time a packet left the line — its queueing and wake-up delay on top of the asked hold; a late p99 well below the RTT means the line did not shape the figures.")
	d.add(t)
	lineAtMostWorkers(d, runs)
}

// lineAtMostWorkers shows the line during the throughput steps with the
// most workers, per contender: where it would queue first.
func lineAtMostWorkers(d *document, runs []profileRun) {
	_, most := throughputRange(runs[0].f)
	if most == "" {
		return
	}
	t := table{head: []string{"profile", "contender", "packets/s", "late p50 / p99", "most held", "dropped", "line CPU (cores)"}, labels: 2}
	for _, pr := range runs {
		for _, c := range pr.f.scenarioContenders("throughput") {
			raws := pr.f.raws("throughput", c, most)
			if len(raws) == 0 || raws[0].Line == nil {
				continue
			}
			l := raws[0].Line
			t.rows = append(t.rows, []cell{{text: pr.nr.Profile}, {text: c}, {text: results.Num(l.PacketsPerSec)},
				{text: usText(l.LateP50US) + " / " + usText(l.LateP99US)}, {text: results.Num(float64(l.MaxQueued))},
				{text: results.Num(float64(l.Dropped))}, {text: results.Num(l.CPUCores)}})
		}
	}
	if len(t.rows) == 0 {
		return
	}
	d.p(fmt.Sprintf("The line during throughput %s (the most workers, first repetition; a step, its warm-up and set-up included): a late p99 far below the profile's RTT means its queueing did not show in the figures.", most))
	d.add(t)
}

// throughputRange returns the closed-loop distinct-key throughput
// variants with the fewest and the most workers ("" when none ran).
func throughputRange(f *figures) (fewest, most string) {
	vs := f.variantsWhere("throughput", closedDistinct)
	if len(vs) == 0 {
		return "", ""
	}
	fewest, most = vs[0], vs[0]
	for _, v := range vs {
		switch w := f.params("throughput", v).Workers; {
		case w < f.params("throughput", fewest).Workers:
			fewest = v
		case w > f.params("throughput", most).Workers:
			most = v
		}
	}
	return fewest, most
}

// acquireVariant is the latency variant the RTT chart reads: one worker,
// so that the figure is one client's round trips.
const acquireVariant = "w1"

// acquireAgainstRTT charts the median acquire of every contender against
// the measured RTT of each profile, with one and two round trips drawn as
// the physics any lock on a new or a pooled connection must pay, and
// lists the same figures.
func acquireAgainstRTT(d *document, runs []profileRun) error {
	var contenders []string
	for _, pr := range runs {
		for _, c := range pr.f.scenarioContenders("latency") {
			if !slices.Contains(contenders, c) {
				contenders = append(contenders, c)
			}
		}
	}
	if len(contenders) == 0 {
		return nil
	}
	t := table{head: []string{"contender"}}
	shows := make([]results.Display, len(runs))
	for i, pr := range runs {
		var rows []results.Row
		for _, c := range contenders {
			if x, ok := pr.f.row("latency", c, acquireVariant, "acquire_p50"); ok {
				rows = append(rows, x)
			}
		}
		shows[i] = rowDisplay(rows...)
		t.head = append(t.head, fmt.Sprintf("%s, %s (RTT %s)", pr.nr.Profile, shows[i].Unit, usText(pr.rtt)))
	}
	p := newPlot("Acquire p50 ("+acquireVariant+") against the measured round trip", "measured RTT, us (log scale)", "acquire p50, us (log scale)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = readableLogTicks, readableLogTicks
	lo, hi := math.Inf(1), math.Inf(-1)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	style := runs[0].f
	for _, c := range contenders {
		row := []cell{{text: c}}
		var xys plotter.XYs
		for i, pr := range runs {
			x, ok := pr.f.row("latency", c, acquireVariant, "acquire_p50")
			if !ok {
				row = append(row, cell{text: "–"})
				continue
			}
			text := spread(x, shows[i])
			if pr.rtt > 0 {
				text += " (" + ratio(x.Median, pr.rtt) + " RTT)"
				xys = append(xys, plotter.XY{X: pr.rtt, Y: x.Median})
				lo, hi = math.Min(lo, pr.rtt), math.Max(hi, pr.rtt)
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
	d.p("Median acquire of one worker (latency " + acquireVariant + ") under each profile, and as a multiple of the profile's measured RTT. A lock that reuses a pooled connection pays at least one round trip; one that opens a new connection per claim pays the handshake too, at least two. The chart draws both as physics lines.")
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
// on distinct keys per profile.
func throughputPerProfile(d *document, runs []profileRun) {
	f := runs[0].f
	fewest, most := throughputRange(f)
	if fewest == "" {
		return
	}
	for _, v := range slices.Compact([]string{fewest, most}) {
		w := f.params("throughput", v).Workers
		perProfileTable(d, runs, fmt.Sprintf("Locks/s at %d worker(s)", w), "throughput", v, "cycles_per_sec",
			fmt.Sprintf("Completed short locks per second with %d worker(s) on distinct keys (%s): a worker's rate is bounded by its round trips, so it falls as the RTT grows unless the lock needs fewer of them.", w, v))
	}
}

// perProfileTable shows one figure per contender, a column per profile.
func perProfileTable(d *document, runs []profileRun, title, scenario, variant, metric, text string) {
	var contenders []string
	for _, pr := range runs {
		for _, c := range pr.f.scenarioContenders(scenario) {
			if _, ok := pr.f.row(scenario, c, variant, metric); ok && !slices.Contains(contenders, c) {
				contenders = append(contenders, c)
			}
		}
	}
	if len(contenders) == 0 {
		return
	}
	t := table{head: []string{"contender"}}
	shows := make([]results.Display, len(runs))
	for i, pr := range runs {
		var rows []results.Row
		for _, c := range contenders {
			if x, ok := pr.f.row(scenario, c, variant, metric); ok {
				rows = append(rows, x)
			}
		}
		shows[i] = rowDisplay(rows...)
		t.head = append(t.head, withDisplayUnit(pr.nr.Profile, shows[i]))
	}
	for _, c := range contenders {
		row := []cell{{text: c}}
		for i, pr := range runs {
			if x, ok := pr.f.row(scenario, c, variant, metric); ok {
				row = append(row, cell{text: spread(x, shows[i])})
			} else {
				row = append(row, cell{text: "–"})
			}
		}
		t.rows = append(t.rows, row)
	}
	d.h3(title)
	d.p(text)
	d.add(t)
}

// failuresPerProfile shows acquires that failed and the acquire tail per
// contender under each profile: what jitter and loss do to a lock that
// waits for several servers.
func failuresPerProfile(d *document, runs []profileRun) {
	t := table{head: []string{"contender"}}
	for _, pr := range runs {
		t.head = append(t.head, pr.nr.Profile+" p99 / failed")
	}
	var contenders []string
	for _, pr := range runs {
		for _, c := range pr.f.scenarioContenders("latency") {
			if !slices.Contains(contenders, c) {
				contenders = append(contenders, c)
			}
		}
	}
	for _, c := range contenders {
		row := []cell{{text: c}}
		for _, pr := range runs {
			p99, ok := pr.f.row("latency", c, acquireVariant, "acquire_p99")
			failed, fok := pr.f.row("latency", c, acquireVariant, "failures")
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
		if pr.nr.JitterUS > 0 || pr.nr.Loss > 0 {
			shaped = append(shaped, fmt.Sprintf("%s (jitter ±%s, loss %s%%)", pr.nr.Profile, usText(pr.nr.JitterUS), results.Num(100*pr.nr.Loss)))
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

// claimsPerProfile checks the run's claims under each profile.
func claimsPerProfile(d *document, r *results.Results, runs []profileRun) {
	if len(r.Claims) == 0 {
		return
	}
	per := make([][]Claim, len(runs))
	for i, pr := range runs {
		per[i] = Check(r.UnderNetwork(pr.nr.Label()))
	}
	t := table{head: []string{"claim"}}
	for _, pr := range runs {
		t.head = append(t.head, pr.nr.Profile)
	}
	open := 0
	for j := range per[0] {
		row := []cell{{text: per[0][j].Statement}}
		decided := false
		for i := range runs {
			c := per[i][j]
			row = append(row, cell{text: string(c.Verdict), class: string(c.Verdict)})
			decided = decided || c.Verdict != Inconclusive
		}
		if !decided {
			open++
			continue
		}
		t.rows = append(t.rows, row)
	}
	d.h3("Claims checked per profile")
	text := "Every claim evaluated against each profile's figures alone, with the same rules as the claims section (which checks the first profile)."
	if open > 0 {
		text += fmt.Sprintf(" %d claim(s) inconclusive under every profile (mostly: their scenarios did not run) are left out.", open)
	}
	d.p(text)
	if len(t.rows) > 0 {
		d.add(t)
	}
}
