package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// The targets of the network-profiles issue, checked in every run that
// measured under profiles: the targets contenders declare for a profile
// (ClaimRule.Network: warm spares and TCP Fast Open against Redis, a cold
// claim in round trips), the floors' claims under every profile, and the
// network's own: the measured round trip against the asked, and whether
// the delay line limited the throughput.

// RTTTargetProfile is the profile the round-trip target is set at: a
// round trip as between availability zones.
const RTTTargetProfile = "az"

// Bounds of the network's own targets.
const (
	// RTTTolerance: the measured RTT p50 is within 10% of the asked.
	RTTTolerance = 0.1
	// RTTBound: a step whose workers each kept this share of the rate of
	// one worker alone was bounded by the round trip; below it, by
	// something else, on a small machine its CPU. LineShareBottleneck and
	// LineShareFree: the line's share of the CPU the step used above which
	// it is the bottleneck, below which it is not.
	RTTBound, LineShareBottleneck, LineShareFree = 0.8, 0.2, 0.1
	// ZeroLineShare: through a line that holds nothing the locks/s at the
	// most workers stay within 10% of loopback's, or the line limits
	// them.
	ZeroLineShare = 0.9
)

// A Target is one checked statement of the network issue: its verdict
// and the figures it rests on.
type Target struct {
	Statement, Profile string
	Verdict            ClaimVerdict
	Evidence           string
}

// A ProfileRun is a run's figures under one network profile.
type ProfileRun struct {
	Network results.NetworkRun
	*Run
	// RTTUS is the measured bench-to-server round trip, µs (0:
	// unmeasured).
	RTTUS float64
}

// Profiles reads r under each of its network profiles, in the run's
// order.
func Profiles(r *results.Results) []ProfileRun {
	var out []ProfileRun
	for _, nr := range r.Networks {
		out = append(out, ProfileRun{Network: nr, Run: New(r.UnderNetwork(nr.Label())), RTTUS: nr.MeasuredRTTUS()})
	}
	return out
}

// NetworkTargets checks the targets of r against its runs under each of
// its network profiles, in the run's order.
func NetworkTargets(r *results.Results, runs []ProfileRun) []Target {
	var ts []Target
	runOf := func(profile string) (ProfileRun, bool) {
		i := slices.IndexFunc(runs, func(pr ProfileRun) bool { return pr.Network.Profile == profile })
		if i < 0 {
			return ProfileRun{}, false
		}
		return runs[i], true
	}
	for _, rule := range r.Claims {
		if rule.Network == "" {
			continue
		}
		t := Target{Statement: rule.Statement, Profile: rule.Network, Verdict: ClaimInconclusive, Evidence: "not measured: the run had no " + rule.Network + " profile"}
		if pr, ok := runOf(rule.Network); ok {
			c := pr.Evaluate(rule)
			t.Verdict, t.Evidence = c.Verdict, c.Evidence
		}
		ts = append(ts, t)
	}
	t := Target{Statement: fmt.Sprintf("the measured round trip (TCP ping-pong p50, median over paths) is within %.0f%% of the asked", 100*RTTTolerance),
		Profile: RTTTargetProfile, Verdict: ClaimInconclusive, Evidence: "not measured: the run had no " + RTTTargetProfile + " profile"}
	if pr, ok := runOf(RTTTargetProfile); ok {
		t.Verdict, t.Evidence = rttTarget(pr.Network)
		var others []string
		for _, o := range runs {
			if rs := PathRatios(o.Network); len(rs) > 0 && o.Network.Profile != RTTTargetProfile {
				others = append(others, o.Network.Profile+" "+results.Ratio(Median(rs), 1))
			}
		}
		if len(others) > 0 {
			t.Evidence += "; other profiles: " + strings.Join(others, ", ")
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

// row returns the summary row of one figure.
func (run *Run) row(scenario, contender, variant, metric string) (results.Row, bool) {
	i := slices.IndexFunc(run.r.Summary, func(x results.Row) bool {
		return x.Scenario == scenario && x.Contender == contender && x.Variant == variant && x.Metric == metric
	})
	if i < 0 {
		return results.Row{}, false
	}
	return run.r.Summary[i], true
}

// ContendersIn lists the contenders with figures in a scenario: the locks
// in the order of Locks, then the floors.
func (run *Run) ContendersIn(scenario string) []string {
	var out []string
	for _, c := range append(run.Locks(), run.floors...) {
		if slices.ContainsFunc(run.r.Summary, func(x results.Row) bool { return x.Scenario == scenario && x.Contender == c }) {
			out = append(out, c)
		}
	}
	return out
}

// ThroughputRange returns the closed-loop distinct-key throughput
// variants with the fewest and the most workers ("" when none ran).
func (run *Run) ThroughputRange() (fewest, most string) {
	vs := slices.DeleteFunc(run.variants("throughput"), func(v string) bool { return !ClosedDistinct(run.params("throughput", v)) })
	if len(vs) == 0 {
		return "", ""
	}
	fewest, most = vs[0], vs[0]
	for _, v := range vs {
		switch w := run.params("throughput", v).Workers; {
		case w < run.params("throughput", fewest).Workers:
			fewest = v
		case w > run.params("throughput", most).Workers:
			most = v
		}
	}
	return fewest, most
}

// zeroLineTargets compares, for a run with loopback and a profile of no
// delay (rtt=0), the locks/s at the most workers of the same contenders
// through the line and directly: what the line itself costs the
// throughput, with no round trip to tell it apart from.
func zeroLineTargets(runs []ProfileRun) []Target {
	direct := slices.IndexFunc(runs, func(pr ProfileRun) bool { return pr.Network.Label() == "" })
	if direct < 0 {
		return nil
	}
	var ts []Target
	for _, pr := range runs {
		if pr.Network.Label() == "" || pr.Network.AskedRTTUS != 0 {
			continue
		}
		_, most := pr.ThroughputRange()
		if most == "" {
			continue
		}
		var ks []float64
		for _, c := range pr.ContendersIn("throughput") {
			z, okz := pr.row("throughput", c, most, results.ThroughputMetrics.CyclesPerSec.Name)
			d, okd := runs[direct].row("throughput", c, most, results.ThroughputMetrics.CyclesPerSec.Name)
			if okz && okd && d.Median > 0 {
				ks = append(ks, z.Median/d.Median)
			}
		}
		if len(ks) == 0 {
			continue
		}
		t := Target{Statement: fmt.Sprintf("through a line that holds nothing the locks/s at the most workers (throughput %s) stay within %.0f%% of loopback's", most, 100*(1-ZeroLineShare)),
			Profile: pr.Network.Profile, Verdict: ClaimFails}
		if Median(ks) >= ZeroLineShare {
			t.Verdict = ClaimHolds
		}
		t.Evidence = fmt.Sprintf("%s of loopback's (median over %d contenders; %s–%s)", results.Ratio(Median(ks), 1), len(ks), results.Ratio(slices.Min(ks), 1), results.Ratio(slices.Max(ks), 1))
		ts = append(ts, t)
	}
	return ts
}

// rttTarget checks the median over a profile's paths of measured/asked.
func rttTarget(nr results.NetworkRun) (ClaimVerdict, string) {
	rs := PathRatios(nr)
	if len(rs) == 0 {
		return ClaimInconclusive, "no round trip measured"
	}
	within := 0
	for _, k := range rs {
		if k >= 1-RTTTolerance && k <= 1+RTTTolerance {
			within++
		}
	}
	m := Median(rs)
	v := ClaimFails
	if m >= 1-RTTTolerance && m <= 1+RTTTolerance {
		v = ClaimHolds
	}
	return v, fmt.Sprintf("%s (paths %s–%s; %d of %d within)", results.Ratio(m, 1), results.Ratio(slices.Min(rs), 1), results.Ratio(slices.Max(rs), 1), within, len(rs))
}

// floorTargets checks the claims of the floors (the same exchange without
// the lock, bounding the lock from below) under every profile: one row a
// claim, failing where any profile fails it.
func floorTargets(r *results.Results, runs []ProfileRun) []Target {
	var ts []Target
	for _, rule := range r.Claims {
		if rule.Network != "" || !runs[0].info[rule.Subject].Floor {
			continue
		}
		t := Target{Statement: rule.Statement, Verdict: ClaimInconclusive}
		by := map[ClaimVerdict][]string{}
		var profiles []string
		for _, pr := range runs {
			v := pr.Evaluate(rule).Verdict
			by[v] = append(by[v], pr.Network.Profile)
			profiles = append(profiles, pr.Network.Profile)
		}
		switch {
		case len(by[ClaimFails]) > 0:
			t.Verdict = ClaimFails
		case len(by[ClaimHolds]) == len(runs):
			t.Verdict = ClaimHolds
		}
		var ev []string
		for _, v := range []ClaimVerdict{ClaimHolds, ClaimFails, ClaimInconclusive} {
			if len(by[v]) > 0 {
				ev = append(ev, string(v)+" under "+strings.Join(by[v], ", "))
			}
		}
		t.Profile, t.Evidence = strings.Join(profiles, ", "), strings.Join(ev, "; ")
		ts = append(ts, t)
	}
	return ts
}

// A LineLoad is what the machine's CPU did during one throughput step:
// cores busy with the bench's clients, the servers and the line.
type LineLoad struct {
	Contender   string
	LocksPerSec float64
	// Scaling is LocksPerSec over the workers' count times the rate of
	// the step with the fewest workers: 1 when every worker went as fast
	// as one alone, bounded only by its round trips.
	Scaling           float64
	Busy, Line        float64 // cores
	LateP99US, RTTUS  float64
	PacketsPerSec     float64
	LineMsPer1k       float64 // line CPU per 1,000 locks
	ClientServerPer1k float64 // the bench's clients and the servers, per 1,000 locks
}

// Share is the line's part of the CPU the step used.
func (l LineLoad) Share() float64 {
	if l.Busy <= 0 {
		return 0
	}
	return l.Line / l.Busy
}

// LineLoads returns the line's load during the closed-loop distinct-key
// throughput step with the most workers, per contender, from the first
// repetition that recorded the line and its CPU figures.
func (pr ProfileRun) LineLoads() (variant string, loads []LineLoad) {
	fewest, most := pr.ThroughputRange()
	if most == "" || fewest == most {
		return "", nil
	}
	workers := float64(pr.params("throughput", most).Workers) / float64(pr.params("throughput", fewest).Workers)
	for _, c := range pr.ContendersIn("throughput") {
		alone, ok := pr.row("throughput", c, fewest, results.ThroughputMetrics.CyclesPerSec.Name)
		if !ok || alone.Median <= 0 {
			continue
		}
		for _, x := range pr.raws[rawKey{"throughput", c, most}] {
			cps, ok1 := x.Figure(results.ThroughputMetrics.CyclesPerSec.Name)
			cl, ok2 := x.Figure(results.ThroughputMetrics.ClientCPUMsPer1k.Name)
			sv, ok3 := x.Figure(results.ThroughputMetrics.ServerCPUMsPer1k.Name)
			if x.Line == nil || !ok1 || !ok2 || !ok3 || cps <= 0 {
				continue
			}
			l := LineLoad{Contender: c, LocksPerSec: cps, Scaling: cps / (workers * alone.Median), Line: x.Line.CPUCores, LateP99US: x.Line.LateP99US,
				RTTUS: pr.RTTUS, PacketsPerSec: x.Line.PacketsPerSec, ClientServerPer1k: cl + sv}
			l.Busy = (cl+sv)*cps/1e6 + l.Line
			l.LineMsPer1k = l.Line * 1e6 / cps
			loads = append(loads, l)
			break
		}
	}
	return most, loads
}

// lineTargets checks, under every emulated profile, that the line was not
// the bottleneck at the most workers: where the workers fell well short of
// the rate each reaches alone (RTTBound), the round trip did not set the
// rate but the CPU, and where the line took LineShareBottleneck or more
// of the CPU the step used, the line set it; where the workers kept
// their rate, or the line took less than LineShareFree, it did not. (On a
// machine shared with other work the cores busy alone cannot tell: the
// others' CPU is not counted.)
func lineTargets(r *results.Results, runs []ProfileRun) []Target {
	var ts []Target
	for _, pr := range runs {
		if pr.Network.Label() == "" {
			continue
		}
		most, loads := pr.LineLoads()
		if len(loads) == 0 {
			continue
		}
		var busy, share, scaling []float64
		for _, l := range loads {
			busy, share, scaling = append(busy, l.Busy), append(share, l.Share()), append(scaling, l.Scaling)
		}
		b, s, k := Median(busy), Median(share), Median(scaling)
		t := Target{Statement: "the delay line does not limit the locks/s at the most workers (throughput " + most + "; inferred from the CPU)", Profile: pr.Network.Profile, Verdict: ClaimInconclusive}
		why := ""
		switch {
		case k < RTTBound && s >= LineShareBottleneck:
			t.Verdict, why = ClaimFails, "not bound by the round trip, and the line takes a large part of the CPU: "
		case k >= RTTBound:
			t.Verdict, why = ClaimHolds, "bound by the round trip: "
		case s < LineShareFree:
			t.Verdict, why = ClaimHolds, "the line takes a small part of the CPU: "
		}
		t.Evidence = fmt.Sprintf("%sthe workers kept %.0f%% of one worker's rate each; cores busy %s of %d, the line's share %.0f%% (medians over %d contenders; share %.0f–%.0f%%)",
			why, 100*k, results.Num(b), r.Environment.Cores, 100*s, len(loads), 100*slices.Min(share), 100*slices.Max(share))
		ts = append(ts, t)
	}
	return ts
}

// PathRatios are measured RTT p50 / asked RTT of every path of a profile
// with a round trip measured.
func PathRatios(nr results.NetworkRun) []float64 {
	var rs []float64
	for _, p := range nr.Paths {
		if p.RTT.N > 0 && p.AskedRTTUS > 0 {
			rs = append(rs, p.RTT.P50/p.AskedRTTUS)
		}
	}
	return rs
}
