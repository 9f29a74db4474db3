package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// TestNetworkSection: the fixture run as if measured under loopback and
// under a profile of 1 ms (its az figures made up as the loopback ones
// plus 1000 us, its line busy with 0.8 cores at 64 workers): the other
// sections render exactly as for the loopback run alone, but for the
// decision, which says it holds for loopback and gives the verdicts at
// az where the pick changes; the network
// section gives the targets as checked statements (the line limiting the
// locks/s at 64 workers, on 2 cores), one row of round trips per profile,
// acquire per profile with units and as a multiple of the measured RTT,
// and its chart; every path goes to the details.
func TestNetworkSection(t *testing.T) {
	base := fixture(t)
	plain, err := Render(base)
	if err != nil {
		t.Fatal(err)
	}
	r := *base
	r.Raw, r.Summary = nil, nil
	for _, x := range base.Raw {
		r.Raw = append(r.Raw, x)
		x.Variant, x.Network = x.Variant+results.NetworkSuffix+"az", "az"
		var ms []results.Metric
		for _, m := range x.Metrics {
			if m.Unit == "us" {
				m.Value += 1000
			}
			ms = append(ms, m)
		}
		x.Metrics = ms
		if x.Scenario == "throughput" && x.Variant == "distinct-w64"+results.NetworkSuffix+"az" {
			x.Line = &results.LineCost{CPUCores: 0.8, PacketsPerSec: 50000, LateP99US: 100}
		}
		r.Raw = append(r.Raw, x)
	}
	r.Summary = results.Summarize(r.Raw)
	path := func(server string, rtt float64) results.NetworkPath {
		return results.NetworkPath{Server: server, Profile: "az", AskedRTTUS: 1000,
			RTT: results.SpreadUS{N: 50, P50: rtt, P90: rtt, Min: rtt, Max: rtt}, Connect: results.SpreadUS{N: 50, P50: rtt, P90: rtt, Min: rtt, Max: rtt}}
	}
	r.Networks = []results.NetworkRun{
		{Profile: "loopback", Paths: []results.NetworkPath{{Server: "s", Profile: "loopback", Connect: results.SpreadUS{N: 50, P50: 20, P90: 25, Min: 15, Max: 40}}}},
		{Profile: "az", AskedRTTUS: 1000, JitterUS: 100, LineOwnRTTUS: 15, DirectRTTUS: 10, CompensationUS: 90,
			UncompensatedRTT: results.SpreadUS{N: 100, P50: 1090}, CompensationRounds: results.SpreadUS{N: 5, Min: 80, Max: 110}, Paths: []results.NetworkPath{path("s", 1000), path("t", 1000)},
			Line: &results.LineCost{Seconds: 10, Packets: 1000, PacketsPerSec: 100, CPUCores: 0.1, LateP50US: 9, LateP99US: 80}},
	}
	r.Claims = append(slices.Clone(r.Claims),
		results.ClaimRule{ID: "t-cold", Statement: "monolock takes two round trips at az", Scenario: "latency", Network: "az", Variant: "w1",
			Subject: "monolock", Metric: "acquire_p50", Op: results.Within, Than: results.ClaimBound{RTTs: 2, Factor: 1.2}, Spread: results.SpreadRange},
		results.ClaimRule{ID: "t-far", Statement: "monolock at region", Scenario: "latency", Network: "region", Variant: "w1",
			Subject: "monolock", Metric: "acquire_p50", Op: results.AtMost, Than: results.ClaimBound{Value: 1}, Spread: results.SpreadRange})
	rep, err := Render(&r)
	if err != nil {
		t.Fatal(err)
	}
	md := string(rep.Markdown)
	before, network, ok := strings.Cut(md, "## Network profiles")
	if !ok {
		t.Fatal("no network section")
	}
	plainBefore, _, _ := strings.Cut(string(plain.Markdown), "## Terms")
	decision := section(before, "Which lock for which job")
	if !strings.Contains(decision, "Verdicts for the first network profile of this run, loopback") {
		t.Errorf("the decision does not say which profile it holds for:\n%s", decision)
	}
	withoutDecision := func(md string) string { return strings.Replace(md, section(md, "Which lock for which job"), "", 1) }
	if got := strings.Replace(withoutDecision(before), " · [Network profiles](#network-profiles)", "", 1); got != withoutDecision(plainBefore) {
		t.Errorf("the sections before the network section differ from the loopback run's report:\n%s\n----\n%s", got[:min(len(got), 600)], plainBefore[:min(len(plainBefore), 600)])
	}
	if strings.Contains(before, "@az") {
		t.Error("a section before the network section shows a variant of the second profile")
	}
	for _, want := range []string{"### Targets", "| the delay line does not limit the locks/s at the most workers (throughput distinct-w64; inferred from the CPU) | az | fails |",
		"is within 10% of the asked | az | holds | 1.00×", "| monolock takes two round trips at az | az | fails |", "measured RTT 1 ms: 1.",
		"| monolock at region | region | inconclusive | not measured: the run had no region profile |", "90 µs (rounds 80 µs–110 µs; uncompensated 1.09 ms)", "15 µs (10 µs)", "(RTT 1 ms)", " ms (", "Claims checked per profile"} {
		if !strings.Contains(network, want) {
			t.Errorf("network section lacks %q", want)
		}
	}
	if strings.Contains(before, "two round trips at az") {
		t.Error("the claims section checks a network target")
	}
	if !strings.Contains(string(rep.Details), "bench → s") {
		t.Error("the details lack the measured paths")
	}
	found := false
	for _, c := range rep.Charts {
		if c.Name == "network-acquire-rtt" && bytes.Contains(c.SVG, []byte("2 RTT")) {
			found = true
		}
	}
	if !found {
		t.Error("no acquire-against-RTT chart with its physics lines")
	}
	if bytes.Contains(plain.Markdown, []byte("## Network profiles")) {
		t.Error("a run without profiles has a network section")
	}
}

// TestZeroLineTarget: a run with a profile of no delay decides whether the
// line limits the throughput from the same contenders' locks/s through it
// and on loopback, and then infers nothing from the CPU.
func TestZeroLineTarget(t *testing.T) {
	base := fixture(t)
	for _, keep := range []float64{0.5, 0.97} {
		r := *base
		r.Raw, r.Summary = nil, nil
		for _, x := range base.Raw {
			r.Raw = append(r.Raw, x)
			x.Variant, x.Network = x.Variant+results.NetworkSuffix+"rtt=0s", "rtt=0s"
			var ms []results.Metric
			for _, m := range x.Metrics {
				if m.Name == "cycles_per_sec" {
					m.Value *= keep
				}
				ms = append(ms, m)
			}
			x.Metrics = ms
			if x.Scenario == "throughput" {
				x.Line = &results.LineCost{CPUCores: 0.8, PacketsPerSec: 50000}
			}
			r.Raw = append(r.Raw, x)
		}
		r.Summary = results.Summarize(r.Raw)
		r.Networks = []results.NetworkRun{{Profile: "loopback"}, {Profile: "rtt=0s", LineOwnRTTUS: 20, DirectRTTUS: 15}}
		rep, err := Render(&r)
		if err != nil {
			t.Fatal(err)
		}
		verdict := "holds"
		if keep < analysis.ZeroLineShare {
			verdict = "fails"
		}
		md := string(rep.Markdown)
		want := "| through a line that holds nothing the locks/s at the most workers (throughput distinct-w64) stay within 10% of loopback's | rtt=0s | " + verdict + " | " + results.Ratio(keep, 1)
		if !strings.Contains(md, want) {
			t.Errorf("keeping %v of the locks/s: no row %q", keep, want)
		}
		if strings.Contains(md, "inferred from the CPU") {
			t.Error("a run with a line that holds nothing still infers the line's cost from the CPU")
		}
	}
}

// A scenario measured under one profile only gets no per-profile table
// (its own section shows it): a quick run measures latency alone under
// its second profile, so throughput and handover compare nothing. A claim
// decided under one profile and not measured under the other does not
// change its verdict.
func TestNetworkSectionOneProfileScenario(t *testing.T) {
	base := fixture(t)
	r := *base
	r.Raw, r.Summary = nil, nil
	for _, x := range base.Raw {
		r.Raw = append(r.Raw, x)
		if x.Scenario != "latency" {
			continue
		}
		x.Variant, x.Network = x.Variant+results.NetworkSuffix+"az", "az"
		r.Raw = append(r.Raw, x)
	}
	r.Summary = results.Summarize(r.Raw)
	r.Networks = []results.NetworkRun{
		{Profile: "loopback", Paths: []results.NetworkPath{{Server: "s", Profile: "loopback", Connect: results.SpreadUS{N: 50, P50: 20, P90: 25, Min: 15, Max: 40}}}},
		{Profile: "az", AskedRTTUS: 1000, Paths: []results.NetworkPath{{Server: "s", Profile: "az", AskedRTTUS: 1000,
			RTT: results.SpreadUS{N: 50, P50: 1000, P90: 1000, Min: 1000, Max: 1000}, Connect: results.SpreadUS{N: 50, P50: 1000, P90: 1000, Min: 1000, Max: 1000}}}},
	}
	rep, err := Render(&r)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(rep.Markdown), "## Network profiles")
	if !ok {
		t.Fatal("no network section")
	}
	if !strings.Contains(section, "### Acquire latency against the round trip") {
		t.Error("latency, measured under both profiles, has no per-profile table")
	}
	for _, absent := range []string{"### Locks per second", "### Handover after a graceful release"} {
		if strings.Contains(section, absent) {
			t.Errorf("%s: a table of one profile", absent)
		}
	}
	if !strings.Contains(section, " 0 claim(s) change their verdict with the profile") {
		t.Errorf("claims not measured under az counted as changed:\n%s", section)
	}
}
