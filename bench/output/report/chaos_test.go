package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// chaosFixture is a made-up run of the chaos scenario for two contenders
// (names from the fixture's lock list): one with tokens and no violation,
// one without tokens whose unfenced store accepted a stale write.
func chaosFixture(t *testing.T) *results.Results {
	t.Helper()
	final := int64(40)
	none, one := 0, 1
	line := func(at float64, p, ev string, mark bool) results.ChaosLine {
		return results.ChaosLine{AtMS: at, Process: p, Event: ev, Mark: mark}
	}
	rate := func(k, n int, lo, hi float64) results.ChaosRate {
		return results.ChaosRate{Violations: k, Trials: n, Rate: float64(k) / float64(n), Lo: lo, Hi: hi}
	}
	timeline := results.ChaosTimeline{
		SpanMS: 12000,
		Lanes: []results.ChaosLane{
			{Client: "c1", Bars: []results.ChaosBar{{FromMS: 0, ToMS: 10, Kind: results.BarWait}, {FromMS: 10, ToMS: 400, Kind: results.BarHold}, {FromMS: 5000, ToMS: 6100, Kind: results.BarLost}}},
			{Client: "c2", Bars: []results.ChaosBar{{FromMS: 0, ToMS: 410, Kind: results.BarWait}, {FromMS: 410, ToMS: 800, Kind: results.BarHold}, {FromMS: 11000, ToMS: 12000, Kind: results.BarUnended}}},
		},
		Faults: []results.ChaosFaultSpan{{ID: 1, Kind: "client-pause", Target: "c1", FromMS: 5200, ToMS: 8000}, {ID: 2, Kind: "server-kill", Target: "srv", FromMS: 7000, ToMS: 8500}},
	}
	good := &results.Chaos{
		Seed: 24, History: "histories/alpha.jsonl", Tokens: true, Timeline: timeline,
		NoServerRecord: "its servers offer no watch of a lock",
		Verdict: results.ChaosVerdict{
			Valid: "valid", Operations: 600, Holds: 80, Faults: map[string]int{"client-pause": 1, "server-kill": 1},
			Skipped: map[string]int{"clock-step": 1}, SkipReasons: map[string]string{"clock-step": "monotonic leases"},
			Exclusion: results.ChaosCheck{Valid: "valid"},
			Running:   &none,
			Rate:      rate(0, 2, 0, 0.658), RateByKind: map[string]results.ChaosRate{"client-pause": rate(0, 1, 0, 0.793), "server-kill": rate(0, 1, 0, 0.793)},
			Stores: []results.ChaosStore{
				{Store: "fenced", Valid: "valid", Fenced: true, Writes: 160, Accepted: 158, Linearizable: results.ChaosCheck{Valid: "valid"}, StaleWrites: results.ChaosCheck{Valid: "valid"}, Rejected: 2, LostUpdates: results.ChaosCheck{Valid: "valid"}, Acknowledged: 40, Final: &final},
				{Store: "unfenced", Valid: "valid", Writes: 160, Accepted: 160, Linearizable: results.ChaosCheck{Valid: "valid"}, StaleWrites: results.ChaosCheck{Valid: "valid"}, LostUpdates: results.ChaosCheck{Valid: "valid"}, Acknowledged: 40, Final: &final},
			},
			GrantGapMaxMS: 2100,
		},
	}
	bad := &results.Chaos{
		Seed: 24, History: "histories/beta.jsonl", Tokens: false, Timeline: timeline,
		Notes: []string{"no fencing token: the fenced store's figures are left out"},
		Verdict: results.ChaosVerdict{
			Valid: "invalid", Operations: 580, Holds: 78, Faults: map[string]int{"client-pause": 1, "server-kill": 1},
			Exclusion: results.ChaosCheck{Valid: "invalid", Count: 2, First: &results.ChaosViolation{AtMS: 6000, What: "c2 was granted the lock while c1 still believed it held it, for 100ms", Faults: []int64{1},
				Excerpt: []results.ChaosLine{line(5999, "c2", `{"t":1,"process":"c2","type":"ok","f":"acquire","id":9}`, true)}}},
			OverlapMS: 100,
			Running:   &one,
			Blame: &results.ChaosBlame{ServerEarly: 1, Overlaps: []results.ChaosBlamed{
				{AtMS: 9000, First: "c2", Second: "c1", Blame: "server granted early", Server: "srv", Why: "srv granted c1 before its record ended c2's hold"}}},
			FirstRunning: &results.ChaosViolation{AtMS: 9000, What: "c1 was granted the lock while c2 still believed it held it, for 50ms (c2 was running)", Faults: []int64{2},
				Excerpt: []results.ChaosLine{line(8999, "c1", `{"t":4,"process":"c1","type":"ok","f":"acquire","id":12}`, true)}},
			Rate: rate(1, 2, 0.095, 0.905), RateByKind: map[string]results.ChaosRate{"client-pause": rate(1, 1, 0.207, 1), "server-kill": rate(0, 1, 0, 0.793)},
			Stores: []results.ChaosStore{
				{Store: "fenced", Valid: "valid", Fenced: true, Writes: 150, Accepted: 0, Linearizable: results.ChaosCheck{Valid: "valid"}, StaleWrites: results.ChaosCheck{Valid: "valid"}, LostUpdates: results.ChaosCheck{Valid: "valid"}},
				{Store: "unfenced", Valid: "invalid", Writes: 150, Accepted: 150, Linearizable: results.ChaosCheck{Valid: "valid"}, Visualization: "histories/beta-unfenced.html",
					StaleWrites: results.ChaosCheck{Valid: "invalid", Count: 1, ByKind: map[string]int{"client-pause": 1}, First: &results.ChaosViolation{AtMS: 6100, What: "store unfenced accepted c1's write although c2 had been granted the lock since c1's grant", Faults: []int64{1},
						Excerpt: []results.ChaosLine{
							line(6040, "c2", `{"t":2,"process":"c2","type":"invoke","f":"write","id":10}`, false),
							{AtMS: 6050, Process: "c1", Event: `{"t":3,"process":"c1","type":"invoke","f":"write","id":11,"store":"unfenced","value":"c1-7"}`, Mark: true, Elided: 3},
						}}},
					LostUpdates: results.ChaosCheck{Valid: "valid"}, Acknowledged: 39, Final: &final},
			},
			GrantGapMaxMS: 2600,
			HolderFaults: []results.ChaosHolderFault{
				{ID: 1, Kind: "client-pause", Target: "c1", FaultMS: 2800, HandoverMS: 2900, Kept: true},
				{ID: 3, Kind: "client-pause", Target: "c2", FaultMS: 2800, HandoverMS: 600},
			},
		},
	}
	r := &results.Results{
		SchemaVersion: results.SchemaVersion, RunID: "chaos-fixture", StartedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Environment: results.Environment{Backend: "local"},
		Parameters:  results.Parameters{Repetitions: 1, Scenarios: []string{"chaos"}, Contenders: []string{"alpha", "beta"}, Scenario: map[string]results.Settings{"chaos": {"seed": "24"}}},
		Scenarios:   []results.ScenarioInfo{{Name: "chaos", Title: "Chaos: random faults, recorded histories, checkers"}},
		Contenders:  []results.ContenderInfo{{Name: "alpha", Colour: "#1f5fbf"}, {Name: "beta", Colour: "#c8322d"}},
	}
	for _, x := range []struct {
		name string
		c    *results.Chaos
	}{{"alpha", good}, {"beta", bad}} {
		ms := []results.Metric{{Name: "faults", Unit: "count", Value: 2}, {Name: "double_holders", Unit: "count", Value: float64(x.c.Verdict.Exclusion.Count)}}
		// beta sent a write after its own loss notice; only alpha's
		// tokens give the token figures.
		ms = append(ms, results.Metric{Name: results.ChaosMetrics.WritesAfterLost.Name, Unit: "count", Value: float64(strings.Count(x.name, "b"))})
		if x.c.Tokens {
			ms = append(ms, results.Metric{Name: results.ChaosMetrics.TokenOrderViolations.Name, Unit: "count", Value: 0},
				results.Metric{Name: results.ChaosMetrics.HolderWritesRefusedFenced.Name, Unit: "count", Value: 0})
		}
		r.Raw = append(r.Raw, results.Raw{Scenario: "chaos", Contender: x.name, Variant: "soak", Repetition: 1, Chaos: x.c, Metrics: ms})
	}
	r.Summary = results.Summarize(r.Raw)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestChaosSection renders the chaos section and checks that it says
// what the records hold: per lock the double holders with a running
// holder apart from those with a frozen one, the stale writes behind the
// fence, the locks not freed through a fault on their holder, the token
// figures (none without tokens), the writes after the loss notice and the
// faults by kind, with no :valid? column (issue 36, problem 3); the skip
// reason, the rates,
// the first violations with their excerpts, a timeline per contender (a
// well-formed SVG with the faults shaded), and the links.
func TestChaosSection(t *testing.T) {
	r := chaosFixture(t)
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	// The section with its appendix: the excerpts, stores and holder faults are in details.md.
	md := string(rep.Markdown) + string(rep.Details)
	for _, want := range []string{
		"## Chaos: random faults, recorded histories, checkers",
		"seed 24",
		"| lock | running double holders | frozen-holder overlaps | stale writes accepted behind the fence | lock not freed during a fault on its holder | holder writes refused by the fence | token-order violations | writes after the loss notice | running double holders by the servers' record: server granted early / client learned late / both / unclassified | faults applied |",
		"| alpha | 0 | 0 | 0 | no fault on the holder | 0 | 0 | 0 | no server record | 2: 1 pause, 1 kill |",
		"| beta | 1 | 1 | no fencing tokens | 1 of 2 | no fencing tokens | no fencing tokens | 1 | 1 / 0 / 0 / 0 | 2: 1 pause, 1 kill |",
		"classified by the servers' own record of their grants and lease ends (server events in the history) for: beta. Not classified: alpha (its servers offer no watch of a lock).",
		"- beta, 9,000 ms: c1 granted while c2 ran: server granted early (srv granted c1 before its record ended c2's hold)",
		"| alpha | 600 | 80 | 0 | 0 ms | 2.10 s |",
		"alpha, clock-step skipped: monotonic leases",
		"0/1 (≤ 79.3%)", "1/1 (20.7–100.0%)",
		"### beta: first violation of each kind",
		"double holders, at 6.0 s: c2 was granted the lock while c1 still believed it held it, for 100ms. Blamed on: #1 client-pause on c1.",
		"double holders, the earlier holder running, at 9.0 s: c1 was granted the lock while c2 still believed it held it, for 50ms (c2 was running). Blamed on: #2 server-kill on srv.",
		"stale write accepted by the unfenced store, at 6.1 s",
		`(3 events left out)`,
		"- [beta: history](histories/beta.jsonl)",
		"- [beta: unfenced register, porcupine visualisation](histories/beta-unfenced.html)",
		"![beta: the chaos run's timeline.",
		"One lane per client",
		"| beta | client-pause | 2 | 1 | 0.600 s | 2.90 s |",
	} {
		if !strings.Contains(md, mdEscape(want)) && !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(string(rep.Markdown), ":valid?") {
		t.Error("report.md has a :valid? column")
	}
	if strings.Contains(md, "### alpha: first violation") {
		t.Error("a contender without violations has a violations heading")
	}
	page := string(rep.HTML)
	if !strings.Contains(page, `<a href="histories/beta-unfenced.html">`) {
		t.Error("report.html does not link the visualisation")
	}
	var charts int
	for _, c := range rep.Charts {
		if !strings.HasPrefix(c.Name, "chaos-timeline-") {
			continue
		}
		charts++
		dec := xml.NewDecoder(bytes.NewReader(c.SVG))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s is not well-formed: %v", c.Name, err)
			}
		}
		svg := string(c.SVG)
		if strings.Count(svg, `fill-opacity="0.14"`) != 2 || !strings.Contains(svg, "#1 client-pause") || !strings.Contains(svg, ">c2</text>") {
			t.Errorf("%s lacks the faults or the lanes", c.Name)
		}
	}
	if charts != 2 {
		t.Errorf("%d timelines, want one per contender", charts)
	}
	again, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Markdown, rep.Markdown) || !bytes.Equal(again.HTML, rep.HTML) {
		t.Error("rendering twice differs")
	}
}
