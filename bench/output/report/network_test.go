package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/output/results"
)

// TestNetworkSection: the fixture run as if measured under loopback and
// under a profile of 1 ms (its az figures made up as the loopback ones
// plus 1000 us): the other sections render exactly as for the loopback
// run alone, and the network section gives the asked and measured paths,
// acquire per profile as a multiple of the measured RTT, and its chart.
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
		r.Raw = append(r.Raw, x)
	}
	r.Summary = results.Summarize(r.Raw)
	path := func(server string, rtt float64) results.NetworkPath {
		return results.NetworkPath{Server: server, Profile: "az", AskedRTTUS: 1000,
			RTT: results.SpreadUS{N: 50, P50: rtt, P90: rtt, Min: rtt, Max: rtt}, Connect: results.SpreadUS{N: 50, P50: rtt, P90: rtt, Min: rtt, Max: rtt}}
	}
	r.Networks = []results.NetworkRun{
		{Profile: "loopback", Paths: []results.NetworkPath{{Server: "s", Profile: "loopback", Connect: results.SpreadUS{N: 50, P50: 20, P90: 25, Min: 15, Max: 40}}}},
		{Profile: "az", AskedRTTUS: 1000, JitterUS: 100, LineOwnRTTUS: 15, Paths: []results.NetworkPath{path("s", 1000), path("t", 1000)},
			Line: &results.LineCost{Seconds: 10, Packets: 1000, PacketsPerSec: 100, CPUCores: 0.1, LateP50US: 9, LateP99US: 80}},
	}
	rep, err := Render(&r)
	if err != nil {
		t.Fatal(err)
	}
	md := string(rep.Markdown)
	before, section, ok := strings.Cut(md, "## Network profiles")
	if !ok {
		t.Fatal("no network section")
	}
	plainBefore, _, _ := strings.Cut(string(plain.Markdown), "## Glossary")
	if got := strings.Replace(before, " · [Network profiles](#network-profiles)", "", 1); got != plainBefore {
		t.Errorf("the sections before the network section differ from the loopback run's report:\n%s\n----\n%s", got[:min(len(got), 600)], plainBefore[:min(len(plainBefore), 600)])
	}
	if strings.Contains(before, "@az") {
		t.Error("a section before the network section shows a variant of the second profile")
	}
	for _, want := range []string{"1.00×", "(RTT 1 ms)", "| az | 1 ms | 1 ms | 1.00×–1.00× | 2 |"} {
		if !strings.Contains(section, want) {
			t.Errorf("network section lacks %q", want)
		}
	}
	// every path, the line's cost and every claim per profile are in the
	// appendix
	for _, want := range []string{"bench → s", "line's own RTT", "Claims checked per profile"} {
		if !strings.Contains(string(rep.Details), want) {
			t.Errorf("the network appendix lacks %q", want)
		}
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
