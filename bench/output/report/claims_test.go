package report

import (
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/redisbench"
)

// claimRules are the claims of today's contenders.
func claimRules() []results.ClaimRule {
	return append(monolock.Claims(), redisbench.Claims()...)
}

// claimNamed evaluates the rule with the given id.
func claimNamed(t *testing.T, r *results.Results, id string) analysis.Claim {
	t.Helper()
	for _, c := range analysis.New(r).Claims() {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no claim %q", id)
	return analysis.Claim{}
}

// fig is one figure with one value per repetition.
type fig struct {
	scenario, contender, variant, metric, unit string
	values                                     []float64
}

// synthetic builds a Results from figures (synthetic test data, not a
// measurement). Every contender gets a 2s lease/TTL unless noLease.
func synthetic(figs []fig, extra func(raw []results.Raw)) *results.Results {
	type rk struct {
		scenario, contender, variant string
		rep                          int
	}
	index := map[rk]int{}
	var raw []results.Raw
	for _, f := range figs {
		for i, v := range f.values {
			k := rk{f.scenario, f.contender, f.variant, i + 1}
			j, ok := index[k]
			if !ok {
				j = len(raw)
				index[k] = j
				raw = append(raw, results.Raw{Scenario: f.scenario, Contender: f.contender, Variant: f.variant, Repetition: i + 1, Seconds: 10})
			}
			raw[j].Metrics = append(raw[j].Metrics, results.Metric{Name: f.metric, Unit: f.unit, Value: v})
		}
	}
	if extra != nil {
		extra(raw)
	}
	return declared(&results.Results{
		RunID:  "synthetic",
		Claims: claimRules(),
		Parameters: results.Parameters{Repetitions: 3, Contender: map[string]results.Settings{
			"monolock": {"lease": "2s"}, "redis": {"lease": "2s"}, "redlock": {"lease": "2s"},
		}},
		Summary: results.Summarize(raw),
		Raw:     raw,
	})
}

func TestClaimVerdicts(t *testing.T) {
	lat := func(m, r []float64) []fig {
		return []fig{
			{"latency", "monolock", "w1", "acquire_p50", "us", m},
			{"latency", "redis", "w1", "acquire_p50", "us", r},
		}
	}
	tput := func(m, r []float64) []fig {
		return []fig{
			{"throughput", "monolock", "distinct-w4", "cycles_per_sec", "1/s", []float64{1, 1, 1}},
			{"throughput", "redis", "distinct-w4", "cycles_per_sec", "1/s", []float64{9, 9, 9}},
			{"throughput", "monolock", "distinct-w64", "cycles_per_sec", "1/s", m},
			{"throughput", "redis", "distinct-w64", "cycles_per_sec", "1/s", r},
		}
	}
	handover := func(contender, mode, metric string, v []float64) []fig {
		return []fig{{"handover", contender, mode, metric, "ms", v}}
	}
	withFailed := func(figs []fig, contender, mode string, failed []float64) []fig {
		return append(figs, fig{"handover", contender, mode, "failed", "count", failed})
	}
	fair := func(metric string, v []float64) []fig {
		return []fig{{"fairness", "monolock", "n8", metric, "per 1k", v}}
	}
	// counts sets grants and attempts of every monolock fairness repetition.
	counts := func(grants, attempts int64) func([]results.Raw) {
		return func(raw []results.Raw) {
			for i := range raw {
				if raw[i].Scenario == "fairness" && raw[i].Contender == "monolock" {
					raw[i].Counts = map[string]int64{"grants": grants, "attempts": attempts}
				}
			}
		}
	}
	grantsOnly := func(grants int64) func([]results.Raw) {
		return func(raw []results.Raw) {
			for i := range raw {
				if raw[i].Scenario == "fairness" {
					raw[i].Counts = map[string]int64{"grants": grants}
				}
			}
		}
	}
	tests := []struct {
		name  string
		claim string
		figs  []fig
		extra func([]results.Raw)
		want  analysis.ClaimVerdict
	}{

		{"latency equal", "acquire-latency", lat([]float64{110, 120, 115}, []float64{100, 105, 102}), nil, analysis.ClaimHolds},
		{"latency far apart", "acquire-latency", lat([]float64{400, 420, 410}, []float64{100, 105, 102}), nil, analysis.ClaimFails},
		{"latency straddles", "acquire-latency", lat([]float64{100, 160, 140}, []float64{100, 105, 102}), nil, analysis.ClaimInconclusive},
		{"latency missing", "acquire-latency", lat([]float64{100}, nil), nil, analysis.ClaimInconclusive},

		{"redis more throughput", "short-lock-throughput", tput([]float64{100, 110, 105}, []float64{200, 210, 190}), nil, analysis.ClaimHolds},
		{"redis not more", "short-lock-throughput", tput([]float64{200, 210, 205}, []float64{100, 110, 105}), nil, analysis.ClaimFails},
		{"throughput overlaps", "short-lock-throughput", tput([]float64{100, 110, 105}, []float64{104, 120, 112}), nil, analysis.ClaimInconclusive},
		{"throughput missing", "short-lock-throughput", nil, nil, analysis.ClaimInconclusive},

		{"graceful immediate", "graceful-immediate", handover("monolock", "graceful", "p50", []float64{0.4, 0.5, 0.6}), nil, analysis.ClaimHolds},
		{"graceful slow", "graceful-immediate", handover("monolock", "graceful", "p50", []float64{40, 50, 60}), nil, analysis.ClaimFails},
		{"graceful with failures", "graceful-immediate", withFailed(handover("monolock", "graceful", "p50", []float64{0.4, 0.5, 0.6}), "monolock", "graceful", []float64{0, 1, 0}), nil, analysis.ClaimFails},
		{"graceful straddles", "graceful-immediate", handover("monolock", "graceful", "p50", []float64{4, 5, 16}), nil, analysis.ClaimInconclusive},
		{"graceful missing", "graceful-immediate", handover("redis", "graceful", "p50", []float64{1}), nil, analysis.ClaimInconclusive},

		{"crash within lease", "crash-one-lease", handover("monolock", "crash", "max", []float64{1, 2, 1900}), nil, analysis.ClaimHolds},
		{"crash beyond lease", "crash-one-lease", handover("monolock", "crash", "max", []float64{2500, 2600, 2700}), nil, analysis.ClaimFails},
		{"crash straddles", "crash-one-lease", handover("monolock", "crash", "max", []float64{1, 2, 2500}), nil, analysis.ClaimInconclusive},
		{"crash missing", "crash-one-lease", nil, nil, analysis.ClaimInconclusive},

		{"freeze within lease", "freeze-one-lease", handover("monolock", "freeze", "max", []float64{1800, 1900, 2000}), nil, analysis.ClaimHolds},
		{"freeze beyond lease", "freeze-one-lease", handover("monolock", "freeze", "max", []float64{4000, 4100, 4200}), nil, analysis.ClaimFails},
		{"freeze straddles", "freeze-one-lease", handover("monolock", "freeze", "max", []float64{1900, 2000, 2300}), nil, analysis.ClaimInconclusive},

		{"redis waits the TTL", "redis-crash-ttl", handover("redis", "crash", "p50", []float64{1990, 2050, 2100}), nil, analysis.ClaimHolds},
		{"redis waits the TTL since the last extension", "redis-crash-ttl", handover("redis", "crash", "p50", []float64{1400, 1500, 1800}), nil, analysis.ClaimHolds},
		{"redis hands over early", "redis-crash-ttl", handover("redis", "crash", "p50", []float64{5, 6, 7}), nil, analysis.ClaimFails},
		{"redis straddles", "redis-crash-ttl", handover("redis", "crash", "p50", []float64{5, 2000, 2100}), nil, analysis.ClaimInconclusive},
		{"redis missing", "redis-crash-ttl", nil, nil, analysis.ClaimInconclusive},
		{"redlock waits the TTL", "redlock-crash-ttl", handover("redlock", "crash", "p50", []float64{2000, 2050, 2100}), nil, analysis.ClaimHolds},
		{"redlock hands over early", "redlock-crash-ttl", handover("redlock", "crash", "p50", []float64{50, 60, 70}), nil, analysis.ClaimFails},
		{"redlock straddles", "redlock-crash-ttl", handover("redlock", "crash", "p50", []float64{50, 1990, 2100}), nil, analysis.ClaimInconclusive},

		{"fifo strict", "strict-fifo", fair("fifo_inversions_per_1k", []float64{0, 0, 0.5}), nil, analysis.ClaimHolds},
		{"fifo broken", "strict-fifo", fair("fifo_inversions_per_1k", []float64{20, 30, 25}), nil, analysis.ClaimFails},
		{"fifo straddles", "strict-fifo", fair("fifo_inversions_per_1k", []float64{0, 0, 25}), nil, analysis.ClaimInconclusive},
		{"fifo missing", "strict-fifo", fair("jain_index", []float64{1, 1, 1}), nil, analysis.ClaimInconclusive},

		{"one request per grant", "one-waiter-woken", fair("jain_index", []float64{1, 1, 1}), counts(1000, 1000), analysis.ClaimHolds},
		{"waiters woken in vain", "one-waiter-woken", fair("jain_index", []float64{1, 1, 1}), counts(1000, 4000), analysis.ClaimFails},
		{"attempts metric straddles", "one-waiter-woken", fair("attempts_per_grant", []float64{1, 1, 3}), nil, analysis.ClaimInconclusive},
		{"attempts not recorded", "one-waiter-woken", fair("jain_index", []float64{1, 1, 1}), grantsOnly(1000), analysis.ClaimInconclusive},

		// 10 s per repetition, 1000 grants: 150 ops/s = 1.5 per grant.
		{"quiet coordinator", "quiet-contention", fair("server_ops_per_sec", []float64{150, 150, 140}), grantsOnly(1000), analysis.ClaimHolds},
		{"polled coordinator", "quiet-contention", fair("server_ops_per_sec", []float64{5000, 5200, 5100}), grantsOnly(1000), analysis.ClaimFails},
		{"coordinator load straddles", "quiet-contention", fair("server_ops_per_sec", []float64{150, 150, 5000}), grantsOnly(1000), analysis.ClaimInconclusive},
		{"coordinator load without grants", "quiet-contention", fair("server_ops_per_sec", []float64{150, 150, 140}), nil, analysis.ClaimInconclusive},
		{"ops per grant metric", "quiet-contention", fair("server_ops_per_grant", []float64{1, 1.2, 1.1}), nil, analysis.ClaimHolds},
		{"ops per grant metric polled", "quiet-contention", fair("server_ops_per_grant", []float64{12, 14, 13}), nil, analysis.ClaimFails},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := claimNamed(t, synthetic(tt.figs, tt.extra), tt.claim)
			if got.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s (evidence: %s)", got.Verdict, tt.want, got.Evidence)
			}
			if got.Evidence == "" || got.Threshold == "" || got.Statement == "" {
				t.Fatalf("claim without evidence, threshold or statement: %+v", got)
			}
		})
	}
}

// Every claim reports inconclusive, saying what is missing, on a run
// without data.
func TestClaimsOnEmptyRun(t *testing.T) {
	for _, c := range analysis.New(synthetic(nil, nil)).Claims() {
		if c.Verdict != analysis.ClaimInconclusive {
			t.Errorf("%s: %s on no data", c.ID, c.Verdict)
		}
		if !strings.Contains(c.Evidence, "not measured") {
			t.Errorf("%s: evidence %q does not say what is missing", c.ID, c.Evidence)
		}
	}
}

// A contender that records its lease as text ("= lease") is judged against
// the run's lease, which parity makes the same for every contender.
func TestLeaseParityFallback(t *testing.T) {
	r := synthetic([]fig{{"handover", "monolock", "freeze", "max", "ms", []float64{1700, 1800, 1900}}}, nil)
	r.Parameters.Contender["monolock"] = results.Settings{"lease": "= lease"}
	if d, ok := analysis.New(r).Duration("monolock", "lease"); !ok || d.String() != "2s" {
		t.Fatalf("lease = %v, %v; want 2s from the other contenders", d, ok)
	}
	if c := claimNamed(t, r, "freeze-one-lease"); c.Verdict != analysis.ClaimHolds {
		t.Fatalf("freeze claim %s: %s", c.Verdict, c.Evidence)
	}
	r.Parameters.Contender = nil
	if c := claimNamed(t, r, "freeze-one-lease"); c.Verdict != analysis.ClaimInconclusive || !strings.Contains(c.Evidence, "no lease") {
		t.Fatalf("without any lease: %s: %s", c.Verdict, c.Evidence)
	}
}

// The claim rules give the first reference run (kept in testdata since
// reports/ keeps only the newest runs) the verdicts the hand-written claims
// gave it (the claims' words are the rules' data).
func TestReferenceRunVerdicts(t *testing.T) {
	const path = "testdata/reference-20261130T053533Z.json"
	r, err := results.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r.FillDefaults(results.Defaults{Claims: claimRules(), Scenarios: declarations(r.Parameters.Quick)})
	want := map[string]analysis.ClaimVerdict{
		"acquire-latency": analysis.ClaimFails, "short-lock-throughput": analysis.ClaimHolds, "graceful-immediate": analysis.ClaimHolds,
		"crash-one-lease": analysis.ClaimHolds, "freeze-one-lease": analysis.ClaimHolds, "redis-crash-ttl": analysis.ClaimHolds, "redlock-crash-ttl": analysis.ClaimHolds,
		"strict-fifo": analysis.ClaimHolds, "one-waiter-woken": analysis.ClaimHolds, "quiet-contention": analysis.ClaimHolds,
		// The reference run predates the safety scenario.
		"fenced-no-stale-write": analysis.ClaimInconclusive, "holder-learns-first": analysis.ClaimInconclusive, "redlock-clock-safety": analysis.ClaimInconclusive,
		// The reference run predates the failover scenario.
		"single-point-no-grant-while-down": analysis.ClaimInconclusive, "tokens-increase-across-restart": analysis.ClaimInconclusive,
		"redlock-minority-down": analysis.ClaimInconclusive, "redlock-unsafe-restart": analysis.ClaimInconclusive,
		"target-throughput-monolock": analysis.ClaimInconclusive,
	}
	got := analysis.New(r).Claims()
	if len(got) != len(want) {
		t.Fatalf("%d claims, want %d", len(got), len(want))
	}
	for _, c := range got {
		if c.Verdict != want[c.ID] {
			t.Errorf("%s: %s, want %s (%s)", c.ID, c.Verdict, want[c.ID], c.Evidence)
		}
	}
}

// Issue 26's T2 targets at idle-max-lease2s: every opened session still
// held, and a keep-alive no dearer for the server than Redis's watchdog
// extension (synthetic figures).
func TestScaleKeepAliveTargets(t *testing.T) {
	lease2s := func(metric, unit string, m, r []float64) []fig {
		return []fig{
			{"scale", "monolock", "idle-max-lease2s", metric, unit, m},
			{"scale", "redis", "idle-max-lease2s", metric, unit, r},
		}
	}
	held := func(reached []float64) []fig {
		return append(lease2s("sessions_reached", "count", reached, []float64{20000, 20000, 20000}),
			fig{"scale", "monolock", "idle-max-lease2s", "sessions", "count", []float64{20000, 20000, 20000}})
	}
	for _, tt := range []struct {
		name, claim string
		figs        []fig
		want        analysis.ClaimVerdict
	}{
		{"every session held", "target-scale-lease2s-all-held", held([]float64{20000, 20000, 20000}), analysis.ClaimHolds},
		{"sessions lost", "target-scale-lease2s-all-held", held([]float64{769, 10069, 9000}), analysis.ClaimFails},
		{"sessions lost once", "target-scale-lease2s-all-held", held([]float64{20000, 19990, 20000}), analysis.ClaimInconclusive},
		{"keep-alive cheaper than redis", "target-scale-keepalive-cpu-redis", lease2s("server_cpu_us_per_heartbeat", "us", []float64{8, 9, 10}, []float64{10.5, 11, 12}), analysis.ClaimHolds},
		{"keep-alive dearer than redis", "target-scale-keepalive-cpu-redis", lease2s("server_cpu_us_per_heartbeat", "us", []float64{25, 26, 27}, []float64{10, 11, 12}), analysis.ClaimFails},
		{"keep-alive cost overlaps", "target-scale-keepalive-cpu-redis", lease2s("server_cpu_us_per_heartbeat", "us", []float64{9, 11, 13}, []float64{10, 11, 12}), analysis.ClaimInconclusive},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := synthetic(tt.figs, nil)
			r.Claims = monolock.Contender().Claims
			got := claimNamed(t, r, tt.claim)
			if got.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s (evidence: %s)", got.Verdict, tt.want, got.Evidence)
			}
		})
	}
}

// A bound taken from another variant of the subject (Than.Variant): the
// same figure at another size.
func TestClaimBoundFromAnotherVariant(t *testing.T) {
	rule := results.ClaimRule{
		ID: "deep", Claim: "c", Statement: "s", Threshold: "t",
		Scenario: "scale", Variant: "queue-10k", Subject: "monolock", Metric: "promotion_p50",
		Op: results.AtMost, Than: results.ClaimBound{Variant: "queue-1", Factor: 2}, Spread: results.SpreadRange,
	}
	for _, tt := range []struct {
		name       string
		deep, one  []float64
		want       analysis.ClaimVerdict
		inEvidence string
	}{
		{"flat", []float64{150, 160}, []float64{100, 110}, analysis.ClaimHolds, "monolock queue-1"},
		{"grows", []float64{500, 600}, []float64{100, 110}, analysis.ClaimFails, "ratio"},
		{"depth 1 not measured", []float64{150}, nil, analysis.ClaimInconclusive, "no scale queue-1 promotion p50 for monolock"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			figs := []fig{{"scale", "monolock", "queue-10k", "promotion_p50", "us", tt.deep}}
			if tt.one != nil {
				figs = append(figs, fig{"scale", "monolock", "queue-1", "promotion_p50", "us", tt.one})
			}
			r := synthetic(figs, nil)
			r.Claims = []results.ClaimRule{rule}
			got := claimNamed(t, r, "deep")
			if got.Verdict != tt.want || !strings.Contains(got.Evidence, tt.inEvidence) {
				t.Fatalf("verdict %s (evidence %q), want %s with %q", got.Verdict, got.Evidence, tt.want, tt.inEvidence)
			}
		})
	}
}
