package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// The targets of the network-profiles issue, checked in every run that
// measured under profiles: the targets contenders declare for a profile
// (ClaimRule.Network: warm spares and TCP Fast Open against Redis, a cold
// claim in round trips), the floors' claims under every profile, and the
// network's own: the measured round trip against the asked, and whether
// the delay line limited the throughput.

// rttTargetProfile is the profile the round-trip target is set at: a
// round trip as between availability zones.
const rttTargetProfile = "az"

// Bounds of the network's own targets.
const (
	// rttTolerance: the measured RTT p50 is within 10% of the asked.
	rttTolerance = 0.1
	// rttBound: a step whose workers each kept this share of the rate of
	// one worker alone was bounded by the round trip; below it, by
	// something else, on a small machine its CPU. lineShareBottleneck and
	// lineShareFree: the line's share of the CPU the step used above which
	// it is the bottleneck, below which it is not.
	rttBound, lineShareBottleneck, lineShareFree = 0.8, 0.2, 0.1
)

// target is one checked statement: its verdict and the figures it rests
// on.
type target struct {
	statement, profile string
	verdict            analysis.ClaimVerdict
	evidence           string
}

// networkTargets checks the targets against the runs.
func networkTargets(r *results.Results, runs []profileRun) []target {
	var ts []target
	runOf := func(profile string) (profileRun, bool) {
		i := slices.IndexFunc(runs, func(pr profileRun) bool { return pr.nr.Profile == profile })
		if i < 0 {
			return profileRun{}, false
		}
		return runs[i], true
	}
	for _, rule := range r.Claims {
		if rule.Network == "" {
			continue
		}
		t := target{statement: rule.Statement, profile: rule.Network, verdict: analysis.ClaimInconclusive, evidence: "not measured: the run had no " + rule.Network + " profile"}
		if pr, ok := runOf(rule.Network); ok {
			c := pr.f.a.Evaluate(rule)
			t.verdict, t.evidence = c.Verdict, c.Evidence
		}
		ts = append(ts, t)
	}
	t := target{statement: fmt.Sprintf("the measured round trip (TCP ping-pong p50, median over paths) is within %.0f%% of the asked", 100*rttTolerance),
		profile: rttTargetProfile, verdict: analysis.ClaimInconclusive, evidence: "not measured: the run had no " + rttTargetProfile + " profile"}
	if pr, ok := runOf(rttTargetProfile); ok {
		t.verdict, t.evidence = rttTarget(pr.nr)
		var others []string
		for _, o := range runs {
			if rs := pathRatios(o.nr); len(rs) > 0 && o.nr.Profile != rttTargetProfile {
				others = append(others, o.nr.Profile+" "+results.Ratio(median(rs), 1))
			}
		}
		if len(others) > 0 {
			t.evidence += "; other profiles: " + strings.Join(others, ", ")
		}
	}
	ts = append(ts, t)
	ts = append(ts, floorTargets(r, runs)...)
	// Whether the line limits the throughput: measured directly where the
	// run has a line that holds nothing, else inferred from the CPU.
	if zl := zeroLineTargets(runs); len(zl) > 0 {
		return append(ts, zl...)
	}
	return append(ts, lineTargets(r, runs)...)
}

// zeroLineShare: through a line that holds nothing the locks/s at the most
// workers stay within 10% of loopback's, or the line limits them.
const zeroLineShare = 0.9

// zeroLineTargets compares, for a run with loopback and a profile of no
// delay (rtt=0), the locks/s at the most workers of the same contenders
// through the line and directly: what the line itself costs the
// throughput, with no round trip to tell it apart from.
func zeroLineTargets(runs []profileRun) []target {
	direct := slices.IndexFunc(runs, func(pr profileRun) bool { return pr.nr.Label() == "" })
	if direct < 0 {
		return nil
	}
	var ts []target
	for _, pr := range runs {
		if pr.nr.Label() == "" || pr.nr.AskedRTTUS != 0 {
			continue
		}
		_, most := throughputRange(pr.f)
		if most == "" {
			continue
		}
		var ks []float64
		for _, c := range pr.f.scenarioContenders("throughput") {
			z, okz := pr.f.row("throughput", c, most, results.ThroughputMetrics.CyclesPerSec.Name)
			d, okd := runs[direct].f.row("throughput", c, most, results.ThroughputMetrics.CyclesPerSec.Name)
			if okz && okd && d.Median > 0 {
				ks = append(ks, z.Median/d.Median)
			}
		}
		if len(ks) == 0 {
			continue
		}
		t := target{statement: fmt.Sprintf("through a line that holds nothing the locks/s at the most workers (throughput %s) stay within %.0f%% of loopback's", most, 100*(1-zeroLineShare)),
			profile: pr.nr.Profile, verdict: analysis.ClaimFails}
		if median(ks) >= zeroLineShare {
			t.verdict = analysis.ClaimHolds
		}
		t.evidence = fmt.Sprintf("%s of loopback's (median over %d contenders; %s–%s)", results.Ratio(median(ks), 1), len(ks), results.Ratio(slices.Min(ks), 1), results.Ratio(slices.Max(ks), 1))
		ts = append(ts, t)
	}
	return ts
}

// rttTarget checks the median over a profile's paths of measured/asked.
func rttTarget(nr results.NetworkRun) (analysis.ClaimVerdict, string) {
	rs := pathRatios(nr)
	if len(rs) == 0 {
		return analysis.ClaimInconclusive, "no round trip measured"
	}
	within := 0
	for _, k := range rs {
		if k >= 1-rttTolerance && k <= 1+rttTolerance {
			within++
		}
	}
	m := median(rs)
	v := analysis.ClaimFails
	if m >= 1-rttTolerance && m <= 1+rttTolerance {
		v = analysis.ClaimHolds
	}
	return v, fmt.Sprintf("%s (paths %s–%s; %d of %d within)", results.Ratio(m, 1), results.Ratio(slices.Min(rs), 1), results.Ratio(slices.Max(rs), 1), within, len(rs))
}

// floorTargets checks the claims of the floors (the same exchange without
// the lock, bounding the lock from below) under every profile: one row a
// claim, failing where any profile fails it.
func floorTargets(r *results.Results, runs []profileRun) []target {
	var ts []target
	for _, rule := range r.Claims {
		if rule.Network != "" || !runs[0].f.isFloor(rule.Subject) {
			continue
		}
		t := target{statement: rule.Statement, verdict: analysis.ClaimInconclusive}
		by := map[analysis.ClaimVerdict][]string{}
		var profiles []string
		for _, pr := range runs {
			v := pr.f.a.Evaluate(rule).Verdict
			by[v] = append(by[v], pr.nr.Profile)
			profiles = append(profiles, pr.nr.Profile)
		}
		switch {
		case len(by[analysis.ClaimFails]) > 0:
			t.verdict = analysis.ClaimFails
		case len(by[analysis.ClaimHolds]) == len(runs):
			t.verdict = analysis.ClaimHolds
		}
		var ev []string
		for _, v := range []analysis.ClaimVerdict{analysis.ClaimHolds, analysis.ClaimFails, analysis.ClaimInconclusive} {
			if len(by[v]) > 0 {
				ev = append(ev, string(v)+" under "+strings.Join(by[v], ", "))
			}
		}
		t.profile, t.evidence = strings.Join(profiles, ", "), strings.Join(ev, "; ")
		ts = append(ts, t)
	}
	return ts
}

// lineLoad is what the machine's CPU did during one throughput step:
// cores busy with the bench's clients, the servers and the line.
type lineLoad struct {
	contender   string
	locksPerSec float64
	// scaling is locksPerSec over the workers' count times the rate of
	// the step with the fewest workers: 1 when every worker went as fast
	// as one alone, bounded only by its round trips.
	scaling           float64
	busy, line        float64 // cores
	lateP99US, rttUS  float64
	packetsPerSec     float64
	lineMsPer1k       float64 // line CPU per 1,000 locks
	clientServerPer1k float64 // the bench's clients and the servers, per 1,000 locks
}

// share is the line's part of the CPU the step used.
func (l lineLoad) share() float64 {
	if l.busy <= 0 {
		return 0
	}
	return l.line / l.busy
}

// lineLoads returns the line's load during the closed-loop distinct-key
// throughput step with the most workers, per contender, from the first
// repetition that recorded the line and its CPU figures.
func lineLoads(pr profileRun) (variant string, loads []lineLoad) {
	fewest, most := throughputRange(pr.f)
	if most == "" || fewest == most {
		return "", nil
	}
	workers := float64(pr.f.params("throughput", most).Workers) / float64(pr.f.params("throughput", fewest).Workers)
	for _, c := range pr.f.scenarioContenders("throughput") {
		alone, ok := pr.f.row("throughput", c, fewest, results.ThroughputMetrics.CyclesPerSec.Name)
		if !ok || alone.Median <= 0 {
			continue
		}
		for _, x := range pr.f.raws("throughput", c, most) {
			cps, ok1 := x.Figure(results.ThroughputMetrics.CyclesPerSec.Name)
			cl, ok2 := x.Figure(results.ThroughputMetrics.ClientCPUMsPer1k.Name)
			sv, ok3 := x.Figure(results.ThroughputMetrics.ServerCPUMsPer1k.Name)
			if x.Line == nil || !ok1 || !ok2 || !ok3 || cps <= 0 {
				continue
			}
			l := lineLoad{contender: c, locksPerSec: cps, scaling: cps / (workers * alone.Median), line: x.Line.CPUCores, lateP99US: x.Line.LateP99US,
				rttUS: pr.rtt, packetsPerSec: x.Line.PacketsPerSec, clientServerPer1k: cl + sv}
			l.busy = (cl+sv)*cps/1e6 + l.line
			l.lineMsPer1k = l.line * 1e6 / cps
			loads = append(loads, l)
			break
		}
	}
	return most, loads
}

// lineTargets checks, under every emulated profile, that the line was not
// the bottleneck at the most workers: where the workers fell well short of
// the rate each reaches alone (rttBound), the round trip did not set the
// rate but the CPU, and where the line took lineShareBottleneck or more
// of the CPU the step used, the line set it; where the workers kept
// their rate, or the line took less than lineShareFree, it did not. (On a
// machine shared with other work the cores busy alone cannot tell: the
// others' CPU is not counted.)
func lineTargets(r *results.Results, runs []profileRun) []target {
	var ts []target
	for _, pr := range runs {
		if pr.nr.Label() == "" {
			continue
		}
		most, loads := lineLoads(pr)
		if len(loads) == 0 {
			continue
		}
		var busy, share, scaling []float64
		for _, l := range loads {
			busy, share, scaling = append(busy, l.busy), append(share, l.share()), append(scaling, l.scaling)
		}
		b, s, k := median(busy), median(share), median(scaling)
		t := target{statement: "the delay line does not limit the locks/s at the most workers (throughput " + most + "; inferred from the CPU)", profile: pr.nr.Profile, verdict: analysis.ClaimInconclusive}
		why := ""
		switch {
		case k < rttBound && s >= lineShareBottleneck:
			t.verdict, why = analysis.ClaimFails, "not bound by the round trip, and the line takes a large part of the CPU: "
		case k >= rttBound:
			t.verdict, why = analysis.ClaimHolds, "bound by the round trip: "
		case s < lineShareFree:
			t.verdict, why = analysis.ClaimHolds, "the line takes a small part of the CPU: "
		}
		t.evidence = fmt.Sprintf("%sthe workers kept %.0f%% of one worker's rate each; cores busy %s of %d, the line's share %.0f%% (medians over %d contenders; share %.0f–%.0f%%)",
			why, 100*k, results.Num(b), r.Environment.Cores, 100*s, len(loads), 100*slices.Min(share), 100*slices.Max(share))
		ts = append(ts, t)
	}
	return ts
}

// pathRatios are measured RTT p50 / asked RTT of every path of a profile
// with a round trip measured.
func pathRatios(nr results.NetworkRun) []float64 {
	var rs []float64
	for _, p := range nr.Paths {
		if p.RTT.N > 0 && p.AskedRTTUS > 0 {
			rs = append(rs, p.RTT.P50/p.AskedRTTUS)
		}
	}
	return rs
}

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

// targetsTable renders the targets, one row per statement and profile.
func targetsTable(d *document, ts []target) {
	t := table{head: []string{"target", "profile", "verdict", "figures"}, labels: 2}
	for _, x := range ts {
		t.rows = append(t.rows, []cell{{text: x.statement}, {text: x.profile}, {text: string(x.verdict), class: string(x.verdict)}, {text: x.evidence}})
	}
	if len(t.rows) == 0 {
		return
	}
	d.h3("Targets")
	d.p(fmt.Sprintf("The network issue's targets: the contenders' targets at the profile they name, the floors' claims under every profile, the measured round trip within %.0f%% of the asked at %s, and whether the delay line limited the locks/s at the most workers. That is measured where the run has a profile of no delay (rtt=0): the same contenders through the line and on loopback. Without one it is inferred: the line limited a step whose workers fell below %.0f%% of the rate one worker reaches alone (so the round trip did not bound them, the CPU did) while it took %.0f%% or more of the CPU the step used; it did not where they kept that rate, or where it took less than %.0f%%.",
		100*rttTolerance, rttTargetProfile, 100*rttBound, 100*lineShareBottleneck, 100*lineShareFree))
	d.add(t)
}
