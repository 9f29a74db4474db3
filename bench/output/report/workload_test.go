package report

import (
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// workloadRecord is one synthetic repetition of a workload: its measured
// requests, how many of them the stop cut off, acquire p50 and p99 (µs;
// 0: none) and the verdicts of its thresholds (true: passed).
type workloadRecord struct {
	contender, workload string
	requests, cut       int64
	p50, p99            float64
	verdicts            []bool
	warnings            []string
}

// workloadFixture is a synthetic run (made-up figures, labelled as a
// fixture) of the workload scenario with four workloads: jobs, measured
// well, where one contender fails a threshold; cron, whose tail is cut off
// by the stop for every contender (a p99 that is a lower bound); tiny,
// with 17 requests per contender; mixed, a closed loop whose contenders
// measured different counts; leader, where one contender measured a
// single request, still waiting at the stop, and the other none.
func workloadFixture() *results.Results {
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	recs := []workloadRecord{
		{"alpha", "jobs", 1000, 0, 800, 50_300, []bool{true, true}, nil},
		{"beta", "jobs", 1000, 0, 700, 61_700, []bool{true, true}, []string{"ready/jobs.yaml:40:9: warning: arrivals.rate: 300/s is 85.7% of 350/s, the most this contender completed on this workload in a closed loop. Expect requests to queue for a free client"}},
		{"gamma", "jobs", 1000, 0, 900, 152_000, []bool{true, true}, nil},
		{"delta", "jobs", 1000, 0, 6_000, 40_100, []bool{false, true}, []string{"ready/jobs.yaml:40:9: warning: arrivals.rate: 300/s is above 250/s, the most this contender completed on this workload in a closed loop (its 40 clients never idle). It cannot keep up: achieved stays below offered"}},

		{"alpha", "cron", 200, 3, 2_050, 2_300_000, []bool{true}, []string{"the closed-loop maximum was not measured: its 2s window holds fewer than 4 mean holds (2.5s)"}},
		{"beta", "cron", 200, 3, 10_300, 2_310_000, []bool{true}, []string{"the closed-loop maximum was not measured: its 2s window holds fewer than 4 mean holds (2.5s)"}},

		{"alpha", "tiny", 17, 1, 2_000, 2_300_000, []bool{true}, nil},
		{"beta", "tiny", 17, 1, 9_000, 2_310_000, []bool{true}, nil},

		{"alpha", "mixed", 82, 0, 183_200, 263_100, []bool{true}, nil},
		{"beta", "mixed", 63, 0, 204_300, 905_900, []bool{true}, nil},
		{"gamma", "mixed", 7, 0, 150_100, 300_700, []bool{true}, nil},

		{"alpha", "leader", 1, 1, 690_000, 690_000, []bool{true}, nil},
		{"beta", "leader", 0, 0, 0, 0, nil, nil},
	}
	var raw []results.Raw
	for _, rc := range recs {
		r := results.Raw{Scenario: "workload", Contender: rc.contender, Variant: rc.workload, Repetition: 1, StartedAt: start, Seconds: 4,
			Counts:   map[string]int64{"requests": rc.requests, "censored": rc.cut, "unstarted": 0},
			Warnings: rc.warnings}
		if rc.p50 > 0 {
			r.Metrics = append(r.Metrics, results.Metric{Name: "acquire_p50", Unit: "us", Value: rc.p50}, results.Metric{Name: "acquire_p99", Unit: "us", Value: rc.p99})
		}
		r.Metrics = append(r.Metrics, results.Metric{Name: "failures", Unit: "count", Value: 0})
		thresholds := map[string][]string{"jobs": {"acquire_p50 < 5ms", "failures == 0"}, "leader": {"failures == 0"}}[rc.workload]
		if thresholds == nil {
			thresholds = []string{"acquire_p50 < 5ms"}
		}
		for i, pass := range rc.verdicts {
			th := thresholds[i]
			r.Verdicts = append(r.Verdicts, results.Verdict{Threshold: th, Metric: strings.Fields(th)[0], Unit: "us", Value: rc.p50, Known: true, Pass: pass})
		}
		if rc.requests == 0 {
			r.Verdicts = []results.Verdict{{Threshold: "failures == 0", Metric: "failures", Unit: "count", Why: "no measured request in the window"}}
		}
		raw = append(raw, r)
	}
	set := results.Settings{
		"jobs.description":   "jobs: About 300 jobs a second over 5,000 keys.\nRequests arrive at random (Poisson) at 300/s.\nMeasured for 4s after a 1s warm-up.\nSLOs:\n- acquire p50 from the intended start below 5ms (acquire_p50 < 5ms)",
		"cron.description":   "cron: 32 scheduled jobs firing every 8 s on average.\nRequests arrive at random (Poisson) at 4/s.",
		"cron.warnings":      "ready/cron.yaml:37:3: warning: hold: about 67% of the holds (uniform 1s–4s) outlast the lease (2s). Allowed: the lock must then be kept by heartbeats, keep-alives or a watchdog",
		"tiny.description":   "tiny: few requests.",
		"leader.description": "leader\n12 clients, each with its own connections, loop: acquire the key, hold it, release it, then think.",
	}
	r := &results.Results{
		SchemaVersion: results.SchemaVersion, RunID: "fixture-workload", StartedAt: start, FinishedAt: start.Add(time.Hour),
		Environment: results.Environment{CPUModel: "synthetic fixture, not a measurement", Cores: 2, GOMAXPROCS: 2, Backend: "local"},
		Parameters: results.Parameters{Repetitions: 1, Scenarios: []string{"workload"}, Contenders: []string{"alpha", "beta", "gamma", "delta"},
			Scenario: map[string]results.Settings{"workload": set}},
		Contenders: []results.ContenderInfo{{Name: "alpha", Family: "a"}, {Name: "beta", Family: "b"}, {Name: "gamma", Family: "a"}, {Name: "delta", Family: "d"}},
		Raw:        raw,
		Summary:    results.Summarize(raw),
	}
	return declared(r)
}

// rankWorkload is the analysis's ranking of workload v of r.
func rankWorkload(r *results.Results, v string) analysis.WorkloadRanking {
	return analysis.New(r).RankWorkload(workloadScenario, v)
}

// TestWorkloadRanking: a workload is ranked on acquire latency only where
// its samples measure it, with the report's noise rule; thresholds not
// passed come first.
func TestWorkloadRanking(t *testing.T) {
	r := workloadFixture()
	type place struct {
		contender string
		place     int
	}
	for _, c := range []struct {
		workload, metric string
		want             []place
		text             string
	}{
		// 50.3 and 61.7 ms tie (one repetition each: only 2× apart ranks);
		// 152 ms is 2.5× beta's; delta's 40.1 ms comes after them all: it
		// did not pass a threshold.
		{"jobs", "acquire_p99", []place{{"alpha", 1}, {"beta", 1}, {"gamma", 3}, {"delta", 4}},
			"every threshold passed: alpha 50.3 ms (n=1) ~ beta 61.7 ms (n=1), then gamma 152 ms (n=1, 3.02×); 1 threshold not passed: delta 40.1 ms (n=1)"},
		// 3 of 200 requests cut off: from p98.5 up lower bounds, so the
		// p99 is no figure; the median is.
		{"cron", "acquire_p50", []place{{"alpha", 1}, {"beta", 2}},
			"every threshold passed: alpha 2.05 ms (n=1), then beta 10.3 ms (n=1, 5.02×)"},
		{"tiny", "", []place{{"alpha", 0}, {"beta", 0}},
			"not ranked: every contender (17 requests): fewer than the 20 measured requests a p50 needs"},
		// gamma's 7 requests measure no median: the others are ranked
		// without it, on the median since their p99s are not measured.
		{"mixed", "acquire_p50", []place{{"alpha", 1}, {"beta", 1}, {"gamma", 0}},
			"every threshold passed: alpha 183.2 ms (n=1) ~ beta 204.3 ms (n=1); not ranked: gamma (7 requests): fewer than the 20 measured requests a p50 needs"},
		{"leader", "", []place{{"alpha", 0}, {"beta", 0}},
			"not ranked: alpha (1 request): fewer than the 20 measured requests a p50 needs; beta: no measured request"},
	} {
		wr := rankWorkload(r, c.workload)
		var got []place
		for _, rk := range wr.Ranks {
			got = append(got, place{rk.Contender, rk.Place})
		}
		if wr.Metric != c.metric || len(got) != len(c.want) {
			t.Errorf("%s: ranked by %q: %v, want %q: %v", c.workload, wr.Metric, got, c.metric, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: places %v, want %v", c.workload, got, c.want)
				break
			}
		}
		if workloadText(wr) != c.text {
			t.Errorf("%s: %q\nwant %q", c.workload, workloadText(wr), c.text)
		}
	}
	// The decision table's brief: the best group's first place (a tie as
	// its range), the next lock and a count of the rest (delta, which
	// passed fewer thresholds).
	if got, want := workloadBrief(rankWorkload(r, "jobs")), "every threshold passed: 50.3–61.7 ms across the 2 tied (n=1), then gamma 152 ms (n=1, 3.02×), and 1 more that passed fewer thresholds"; got != want {
		t.Errorf("jobs brief: %q\nwant %q", got, want)
	}
	if got, want := workloadBrief(rankWorkload(r, "cron")), "every threshold passed: alpha 2.05 ms (n=1), then beta 10.3 ms (n=1, 5.02×)"; got != want {
		t.Errorf("cron brief: %q\nwant %q", got, want)
	}
	if got, want := workloadBrief(rankWorkload(r, "tiny")), rankWorkload(r, "tiny").Why; got != want {
		t.Errorf("tiny brief: %q, want its reason %q", got, want)
	}
	if why := rankWorkload(r, "mixed").Why; why != "the p99 is not measured for alpha (82 requests), beta (63 requests): fewer than the 100 measured requests a p99 needs" {
		t.Errorf("mixed: why %q", why)
	}
	if why := rankWorkload(r, "cron").Why; why != "the p99 is not measured for every contender (3 of 200 requests still waiting at the stop): p99 a lower bound" {
		t.Errorf("cron: why %q", why)
	}
}

// TestWorkloadReport: report.md gives each workload's description in
// short and its warnings one line each, and the decision rows name no
// winner where nothing is ranked; details.md keeps the SLO table, the
// ranking and the warnings in full, and says a note shared by every
// contender once.
func TestWorkloadReport(t *testing.T) {
	rep, err := Render(workloadFixture())
	if err != nil {
		t.Fatal(err)
	}
	md, details := string(rep.Markdown), string(rep.Details)
	for _, want := range []string{
		"| jobs | alpha, beta (tie) | acquire p99 from the intended start: every threshold passed: 50.3–61.7 ms across the 2 tied (n=1), then gamma 152 ms (n=1, 3.02×), and 1 more that passed fewer thresholds. |",
		"| cron | alpha | acquire p50 from the intended start (the p99 is not measured for every contender",
		"| tiny | not ranked | not ranked: every contender (17 requests): fewer than the 20 measured requests a p50 needs |",
		"| leader | not ranked | not ranked: alpha (1 request): fewer than the 20 measured requests a p50 needs; beta: no measured request |",
		"- cron: hold: about 67% of the holds (uniform 1s–4s) outlast the lease (2s)\n",
		"- jobs (delta): arrivals.rate: 300/s is above 250/s, the most this contender completed on this workload in a closed loop (its 40 clients never idle)\n",
		"- jobs (beta): arrivals.rate: 300/s is 85.7% of 350/s, the most this contender completed on this workload in a closed loop\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// Each file's description is the appendix's (report.md's 40 KB).
	for _, want := range []string{
		"About 300 jobs a second over 5,000 keys.",
		"32 scheduled jobs firing every 8 s on average.",
		"12 clients, each with its own connections, loop: acquire the key, hold it, release it, then think.",
	} {
		if !strings.Contains(details, want) {
			t.Errorf("details.md lacks %q", want)
		}
	}
	for _, want := range []string{
		"Ranking for jobs by acquire p99 from the intended start: every threshold passed: alpha",
		"Ranking for tiny: not ranked: every contender (17 requests): fewer than the 20 measured requests a p50 needs.",
		"| beta | not known: no measured request in the window |",
	} {
		if !strings.Contains(details, want) {
			t.Errorf("details.md lacks %q", want)
		}
	}
	for _, notWant := range []string{"Allowed: the lock must", "the closed-loop maximum was not measured", "It cannot keep up"} {
		if strings.Contains(md, notWant) {
			t.Errorf("report.md has %q: the detail belongs in details.md", notWant)
		}
	}
	for _, want := range []string{
		"- ready/cron.yaml:37:3: warning: hold: about 67% of the holds (uniform 1s–4s) outlast the lease (2s). Allowed: the lock must",
		"- every contender: the closed-loop maximum was not measured: its 2s window holds fewer than 4 mean holds (2.5s)\n",
		"- delta: ready/jobs.yaml:40:9: warning: arrivals.rate: 300/s is above 250/s",
		"- every contender: 3 of 200 measured requests: percentiles from p98.5 up are lower bounds",
	} {
		if !strings.Contains(details, want) {
			t.Errorf("details.md lacks %q", want)
		}
	}
}
