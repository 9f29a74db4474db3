package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

func TestConditionDiffers(t *testing.T) {
	ref := Condition{Scenario: "scale", Variant: "idle-max", SessionsMax: true, Lease: "2s"}
	for _, tt := range []struct {
		c    Condition
		want string
	}{
		{ref, ""},
		{Condition{Scenario: "scale", Variant: "idle-max", SessionsMax: true, Lease: "2s", Repetitions: 3}, ""},
		{Condition{Scenario: "scale", Variant: "idle-1k", Sessions: 1000, Lease: "2s"}, "tested at 1,000 sessions"},
		{Condition{Scenario: "scale", Variant: "idle-max", SessionsMax: true, Lease: "30s"}, "tested at lease 30s"},
		{Condition{Scenario: "scale", Variant: "idle-max", SessionsMax: true, Lease: "2s", Network: "wan"}, "tested on network wan"},
		{Condition{Scenario: "failover", Variant: "restart", Fault: "server-kill"}, "tested in another scenario: failover"},
		{Condition{Scenario: "scale", Variant: "queue-1", SessionsMax: true, Lease: "2s", Depth: 1}, "tested with 1 waiter queued"},
	} {
		if got := tt.c.Differs(ref); got != tt.want {
			t.Errorf("%+v.Differs = %q, want %q", tt.c, got, tt.want)
		}
	}
	restart := Condition{Scenario: "failover", Variant: "restart", Fault: "server-kill"}
	lost := Condition{Scenario: "failover", Variant: "primary-lost-fast", Fault: "primary-lost"}
	if got := lost.Differs(restart); got != "tested with another fault: primary-lost" {
		t.Errorf("primary lost against a restart: %q", got)
	}
}

// handRun is a run of one scenario "s" with variants big (the largest
// count) and small, and a capability "holds-all" (reached ≥ sessions)
// and a ranking figure "cost" declared on both variants.
func handRun(raw []results.Raw) *Run {
	info := results.ScenarioInfo{
		Name: "s",
		Metrics: []results.MetricSpec{
			{Name: "reached", Unit: "count"}, {Name: "sessions", Unit: "count"}, {Name: "cost", Unit: "ms", Better: results.BetterLower},
		},
		Variants: []results.VariantInfo{
			{Name: "small", VariantParams: results.VariantParams{Load: results.LoadIdle, Sessions: 1000}},
			{Name: "big", VariantParams: results.VariantParams{Load: results.LoadIdle, SessionsMax: true}},
			{Name: "kill", VariantParams: results.VariantParams{Fault: "server-kill"}},
			{Name: "lost", VariantParams: results.VariantParams{Fault: "primary-lost"}},
		},
		Decides: []results.DecisionFigure{
			{ID: "holds-all", Text: "holds every session", Where: &results.VariantParams{Load: results.LoadIdle}, Metric: "reached", Op: results.AtLeast, Than: results.ClaimBound{Metric: "sessions"}},
			{ID: "cost", Text: "cost after the fault", Variant: "kill", Metric: "cost"},
			{ID: "cost", Text: "cost after the fault", Variant: "lost", Metric: "cost"},
		},
	}
	r := &results.Results{
		Parameters: results.Parameters{Contenders: []string{"a", "b", "c"}},
		Raw:        raw, Summary: results.Summarize(raw), Scenarios: []results.ScenarioInfo{info},
	}
	return New(r)
}

func raws(c, v string, ms ...results.Metric) []results.Raw {
	var out []results.Raw
	for rep := 1; rep <= 2; rep++ {
		out = append(out, results.Raw{Scenario: "s", Contender: c, Variant: v, Repetition: rep, Metrics: ms})
	}
	return out
}

func m(name, unit string, v float64) results.Metric {
	return results.Metric{Name: name, Unit: unit, Value: v}
}

// A capability is judged at the hardest condition any lock reached: a
// pass at an easier one is not comparable, a failure there stays one.
func TestCapabilityComparesOneCondition(t *testing.T) {
	var raw []results.Raw
	raw = append(raw, raws("a", "big", m("reached", "count", 20000), m("sessions", "count", 20000))...)
	raw = append(raw, raws("b", "small", m("reached", "count", 1000), m("sessions", "count", 1000))...)
	raw = append(raw, raws("c", "small", m("reached", "count", 600), m("sessions", "count", 1000))...)
	run := handRun(raw)
	if v := run.Capability("a", "holds-all"); v.Mark != Holds {
		t.Errorf("a at the largest count: %+v, want Holds", v)
	}
	if v := run.Capability("b", "holds-all"); v.Mark != NotComparable || v.Short != "not comparable: tested at 1,000 sessions" {
		t.Errorf("b passed at 1,000 sessions only: %+v, want NotComparable", v)
	}
	if v := run.Capability("c", "holds-all"); v.Mark != Fails || !strings.Contains(v.Short, "at 1,000 sessions") {
		t.Errorf("c failed at 1,000 sessions: %+v, want Fails, saying where", v)
	}
	p, ok := run.Decide(UseCase{Title: "many sessions", Requires: []string{"holds-all"}})
	if !ok || strings.Join(p.Supports, ",") != "a" {
		t.Errorf("supports %v (%v), want a", p.Supports, ok)
	}
}

// A repetition is judged against its own bound: every session held in
// each repetition holds, though one repetition opened one session fewer
// than another (the full run 20261207T191819Z said "19,733 of 19,734
// held" for Redis); the worst repetition is the one furthest below its
// own count, and the verdict says that repetition's pair.
func TestCapabilityJudgesEachRepetitionAgainstItsOwnBound(t *testing.T) {
	rep := func(c string, n int, reached, sessions float64) results.Raw {
		return results.Raw{Scenario: "s", Contender: c, Variant: "big", Repetition: n, Metrics: []results.Metric{m("reached", "count", reached), m("sessions", "count", sessions)}}
	}
	run := handRun([]results.Raw{
		rep("a", 1, 19733, 19733), rep("a", 2, 19734, 19734), rep("a", 3, 19734, 19734),
		rep("b", 1, 19700, 19733), rep("b", 2, 19000, 19734), rep("b", 3, 19710, 19734),
	})
	if v := run.Capability("a", "holds-all"); v.Mark != Holds || !strings.HasSuffix(v.Detail, "worst repetition 19,733, limit 19,733") {
		t.Errorf("a held every session it opened in each repetition: %+v, want Holds, 19,733 against 19,733", v)
	}
	if v := run.Capability("b", "holds-all"); v.Mark != Fails || !strings.HasSuffix(v.Detail, "worst repetition 19,000, limit 19,734") {
		t.Errorf("b: %+v, want Fails at its worst repetition, 19,000 against 19,734", v)
	}
}

// A ranking compares the locks of the condition most share; the others
// are apart, with how they differ.
func TestRankingComparesOneCondition(t *testing.T) {
	var raw []results.Raw
	raw = append(raw, raws("a", "kill", m("cost", "ms", 3200))...)
	raw = append(raw, raws("b", "kill", m("cost", "ms", 3300))...)
	raw = append(raw, raws("c", "lost", m("cost", "ms", 345))...)
	rk, ok := handRun(raw).Ranking("cost", []string{"a", "b", "c"})
	if !ok || rk.Condition.Variant != "kill" || len(rk.Entries) != 2 {
		t.Fatalf("ranking %+v (%v): want a and b at kill", rk, ok)
	}
	if len(rk.Elsewhere) != 1 || rk.Elsewhere[0].Contender != "c" || rk.Elsewhere[0].Reason != "tested with another fault: primary-lost" {
		t.Errorf("apart %+v: want c, tested with another fault", rk.Elsewhere)
	}
	for _, e := range rk.Entries {
		if e.Contender == "c" {
			t.Error("c's primary loss is ranked against restarts")
		}
	}
}

// A trial that never reached its fault is no evidence: neither ✓ nor ✗,
// and the lock is not picked on it.
func TestVoidTrialIsNoEvidence(t *testing.T) {
	info := results.ScenarioInfo{
		Name:     "safety",
		Metrics:  []results.MetricSpec{{Name: "stale", Unit: "count"}, {Name: "not_granted", Unit: "count"}},
		Variants: []results.VariantInfo{{Name: "pause"}},
		Decides: []results.DecisionFigure{{ID: "fenced", Text: "no stale write", Variant: "pause", Metric: "stale", Op: results.AtMost,
			Void: []results.ClaimGuard{{Metric: "not_granted", Label: "did not grant"}}}},
	}
	var raw []results.Raw
	for rep := 1; rep <= 2; rep++ {
		raw = append(raw,
			results.Raw{Scenario: "safety", Contender: "a", Variant: "pause", Repetition: rep, Metrics: []results.Metric{m("stale", "count", 0), m("not_granted", "count", 0)}},
			results.Raw{Scenario: "safety", Contender: "b", Variant: "pause", Repetition: rep, Metrics: []results.Metric{m("stale", "count", 0), m("not_granted", "count", 2)}})
	}
	run := New(&results.Results{Parameters: results.Parameters{Contenders: []string{"a", "b"}}, Raw: raw, Summary: results.Summarize(raw), Scenarios: []results.ScenarioInfo{info}})
	if v := run.Capability("b", "fenced"); v.Mark != NoEvidence || v.Short != "no evidence: did not grant" {
		t.Errorf("b never granted the second client: %+v, want NoEvidence", v)
	}
	p, _ := run.Decide(UseCase{Title: "fenced", Requires: []string{"fenced"}})
	if strings.Join(p.Supports, ",") != "a" || len(p.Others) != 1 || len(p.Others[0].Apart) != 1 || len(p.Others[0].Failed) != 0 {
		t.Errorf("pick %+v: want a, and b apart without a failure", p)
	}
}

// A requirement no lock was measured on (a quick run leaves out host
// loss) is named by its label after the matrix's ids, apart, never
// mixed among them.
func TestRequiresNamesUnmeasuredApart(t *testing.T) {
	info := results.ScenarioInfo{
		Name:     "safety",
		Metrics:  []results.MetricSpec{{Name: "stale", Unit: "count"}, {Name: "margin", Unit: "ms"}},
		Variants: []results.VariantInfo{{Name: "pause"}, {Name: "host-loss"}},
		Decides: []results.DecisionFigure{
			{ID: "learns-first", Text: "holder learns first (margin > 0)", Variant: "host-loss", Metric: "margin", Op: results.AtLeast},
			{ID: "fenced", Text: "no stale write", Variant: "pause", Metric: "stale", Op: results.AtMost},
		},
	}
	raw := raws("a", "pause", m("stale", "count", 0))
	for i := range raw {
		raw[i].Scenario = "safety"
	}
	run := New(&results.Results{Parameters: results.Parameters{Contenders: []string{"a"}}, Raw: raw, Summary: results.Summarize(raw), Scenarios: []results.ScenarioInfo{info}})
	p, _ := run.Decide(UseCase{Title: "batch", Requires: []string{"learns-first", "fenced"}})
	a := run.Advise(p)
	if want := "requires ✓ on C1 and, not measured in this run, holder learns first"; a.Requires != want {
		t.Errorf("requires %q, want %q", a.Requires, want)
	}
}

// The coordinator row ranks one fault: two clusters by their minority
// down, never against a whole restart, and a standby pair's primary lost
// apart, as not comparable. Figures as the reference full run's.
func TestCoordinatorRowComparesOneFault(t *testing.T) {
	var raw []results.Raw
	for _, c := range []string{"redlock-fast", "etcd"} {
		minority := map[string][]float64{"redlock-fast": {21.7, 24.0}, "etcd": {71.5, 36.8}}[c]
		raw = append(raw, rec("failover", c, "restart", ms("unavailable_ms", "ms", 3150, 3160), ms("grants_while_down", "count", 0, 0))...)
		raw = append(raw, rec("failover", c, "minority-down", ms("unavailable_ms", "ms", minority...), ms("grants_while_down", "count", 1900, 1800))...)
		raw = append(raw, rec("failover", c, "restart-unsafe", ms("double_grants", "count", 0, 0))...)
	}
	raw = append(raw, rec("failover", "monolock-standby", "primary-lost-fast", ms("unavailable_ms", "ms", 362.9, 326.9), ms("grants_while_down", "count", 0, 0), ms("double_grants", "count", 0, 0))...)
	run := declaredRun(raw, results.ContenderInfo{Name: "monolock-standby", Family: "monolock"},
		results.ContenderInfo{Name: "redlock-fast", Family: "redis"}, results.ContenderInfo{Name: "etcd", Family: "etcd"})
	p, ok := run.Decide(useCase("The coordinator"))
	if !ok || p.Deciding == nil {
		t.Fatalf("no deciding ranking: %+v", p)
	}
	rk := p.Deciding
	if rk.Condition.Fault != results.FaultMinorityDown || len(rk.Entries) != 2 {
		t.Fatalf("ranked at %+v: %+v, want redlock-fast and etcd at minority-down", rk.Condition, rk.Entries)
	}
	if got := Median(rk.Entries[0].Values); rk.Entries[0].Contender != "redlock-fast" || got != 22.85 {
		t.Errorf("first %s %v, want redlock-fast's minority down, 22.85 ms", rk.Entries[0].Contender, got)
	}
	if len(rk.Elsewhere) != 1 || rk.Elsewhere[0].Contender != "monolock-standby" || rk.Elsewhere[0].Reason != "tested with another fault: primary-lost" {
		t.Errorf("apart %+v: want monolock-standby, tested with another fault: primary-lost", rk.Elsewhere)
	}
	if !strings.Contains(rk.Text, "longest stretch without a grant") {
		t.Errorf("ranking text %q does not say which figure ranks", rk.Text)
	}
}

// A pitfall deployment is never picked nor named as its family's best,
// even when it is the family's lock closest to qualifying (the quick
// run's correctness row named postgres-pgbouncer for postgres).
func TestPitfallNeverPicked(t *testing.T) {
	var raw []results.Raw
	raw = append(raw, rec("safety", "pool", "pause", ms("trials", "count", 2, 2), ms("not_granted", "count", 0, 0), ms("unsafe_writes_fenced", "count", 0, 0), ms("unsafe_writes_unfenced", "count", 2, 2))...)
	raw = append(raw, rec("safety", "pool", "host-loss", ms("trials", "count", 2, 2), ms("not_granted", "count", 0, 0), ms("never_learned", "count", 0, 0), ms("learn_first_margin_min", "ms", 400, 410))...)
	raw = append(raw, rec("handover", "pool", "freeze", ms("p50", "ms", 1700, 1710), ms("max", "ms", 1900, 1910), ms("failed", "count", 0, 0))...)
	raw = append(raw, rec("safety", "session", "pause", ms("trials", "count", 2, 2), ms("not_granted", "count", 2, 2), ms("unsafe_writes_fenced", "count", 0, 0))...)
	run := declaredRun(raw, results.ContenderInfo{Name: "session", Family: "pg"}, results.ContenderInfo{Name: "pool", Family: "pg", Pitfall: true})
	for _, u := range UseCases {
		p, ok := run.Decide(u)
		if !ok {
			continue
		}
		if slices.Contains(p.Supports, "pool") {
			t.Errorf("%s: the pitfall is picked: %v", u.Title, p.Supports)
		}
		for _, s := range p.Others {
			if s.Contender == "pool" {
				t.Errorf("%s: the pitfall is named as its family's best", u.Title)
			}
		}
	}
}

// holderRecs are a lock's handover and safety records: a freeze and a host
// loss freed within one lease, no second holder before the frozen
// holder's lease ran out, its holder learning first, and crash handovers
// of the given p50s.
func holderRecs(c string, crash ...float64) []results.Raw {
	var raw []results.Raw
	zero := make([]float64, len(crash))
	twos := slices.Repeat([]float64{2}, len(crash))
	raw = append(raw, rec("handover", c, "crash", ms("p50", "ms", crash...), ms("max", "ms", crash...), ms("failed", "count", zero...))...)
	raw = append(raw, rec("handover", c, "freeze", ms("p50", "ms", slices.Repeat([]float64{1700}, len(crash))...), ms("max", "ms", slices.Repeat([]float64{1900}, len(crash))...), ms("failed", "count", zero...))...)
	raw = append(raw, rec("handover", c, "host-loss", ms("p50", "ms", slices.Repeat([]float64{1800}, len(crash))...), ms("max", "ms", slices.Repeat([]float64{1950}, len(crash))...), ms("failed", "count", zero...))...)
	raw = append(raw, rec("safety", c, "pause", ms("trials", "count", twos...), ms("not_granted", "count", zero...), ms("early_grants", "count", zero...), ms("double_grants", "count", twos...))...)
	raw = append(raw, rec("safety", c, "host-loss", ms("trials", "count", twos...), ms("not_granted", "count", zero...), ms("never_learned", "count", zero...), ms("learn_first_margin_min", "ms", slices.Repeat([]float64{400}, len(crash))...))...)
	return raw
}

// A use case reads in one line: the pick, the next lock with the ratio
// of their medians and its range over the repetitions, the lock to avoid
// with the capability it failed; then its figures, one statistic per
// sentence, each saying which.
func TestAdviceReadsInOneLine(t *testing.T) {
	raw := append(holderRecs("a", 10, 10), holderRecs("b", 20, 30)...)
	raw = append(raw, rec("handover", "c", "freeze", ms("failed", "count", 2, 2))...)
	run := declaredRun(raw, results.ContenderInfo{Name: "a", Family: "x"}, results.ContenderInfo{Name: "b", Family: "y"}, results.ContenderInfo{Name: "c", Family: "z"})
	p, ok := run.Decide(useCase("Holders"))
	if !ok {
		t.Fatal("no pick for holders")
	}
	a := run.Advise(p)
	if n := a.Next; n == nil || n.Contender != "b" || n.Ratio != 2.5 || n.Lo != 2 || n.Hi != 3 {
		t.Errorf("next %+v, want b at 2.5× (2–3×)", a.Next)
	}
	want := "use a; b is next, 2.50× worse (2–3×); avoid c (✗ C1: never (> 5s))."
	if a.Line != want {
		t.Errorf("line\n%q, want\n%q", a.Line, want)
	}
	if len(a.Figures) == 0 || !strings.HasPrefix(a.Figures[0], "handover after a crash (SIGKILL), p50, medians in crash (fault kill): a 10 ms (n=2), then b 25 ms (20–30, n=2).") {
		t.Errorf("figures %q: want the medians of the crash handover first", a.Figures)
	}
}

// Leader election requires the coordinator to keep granting while a
// server is down: a single server that frees and tells its holders well
// is not picked, and the line says what it lacks.
func TestLeaderElectionRequiresAvailability(t *testing.T) {
	raw := holderRecs("single", 10, 10)
	raw = append(raw, rec("failover", "single", "restart", ms("unavailable_ms", "ms", 2200, 2300), ms("grants_while_down", "count", 0, 0))...)
	run := declaredRun(raw, results.ContenderInfo{Name: "single", Family: "s"})
	for prefix, picked := range map[string]bool{"Leader election": false, "Holders": true} {
		p, ok := run.Decide(useCase(prefix))
		if !ok {
			t.Fatalf("no pick for %s", prefix)
		}
		a := run.Advise(p)
		if got := slices.Contains(a.Use, "single"); got != picked {
			t.Errorf("%s: single picked %v, want %v: %s", prefix, got, picked, a.Line)
		}
		if !picked && !strings.Contains(a.Line, "closest: single, which fails "+run.Ref("granting-server-down")+" (worst of 2: 0 grants while the servers were down)") {
			t.Errorf("%s: the line does not say what the single server lacks: %s", prefix, a.Line)
		}
	}
}

// A sweep's decision is given per profile where the pick changes: over
// loopback a's acquire p99 is the lowest, over a lossy link a stalls for
// a retransmission and b is the pick; over rack nothing changes, so rack
// gets no verdict of its own. The first line says which path the
// verdicts hold for.
func TestSweepDecisionPerProfile(t *testing.T) {
	p99 := map[string][2][]float64{ // a's, b's
		"":         {{100, 110}, {300, 320}},
		"rack":     {{400, 420}, {900, 950}},
		"az-lossy": {{1.0e6, 2.0e6}, {1500, 1550}},
	}
	var raw []results.Raw
	for network, vals := range p99 {
		for i, c := range []string{"a", "b"} {
			v := "w1"
			if network != "" {
				v += results.NetworkSuffix + network
			}
			for _, x := range rec("latency", c, v, ms("acquire_p99", "us", vals[i]...), ms("acquire_p50", "us", vals[i][0]/2, vals[i][1]/2)) {
				x.Network = network
				raw = append(raw, x)
			}
		}
	}
	r := declared(raw, results.ContenderInfo{Name: "a", Family: "x"}, results.ContenderInfo{Name: "b", Family: "y"})
	r.Networks = []results.NetworkRun{{Profile: "loopback", NetworkPath: "loopback 127.0.0.1"}, {Profile: "rack"}, {Profile: "az-lossy"}}
	r.Summary = results.Summarize(r.Raw)
	d := Verdicts(r)
	if !strings.HasPrefix(d.Scope, "Verdicts for the first network profile of this run, loopback (loopback 127.0.0.1)") {
		t.Errorf("scope %q does not say the path first", d.Scope)
	}
	i := slices.IndexFunc(d.Cases, func(c Case) bool { return strings.HasPrefix(c.Title, "A lock on every request's path") })
	if i < 0 {
		t.Fatalf("no latency use case among %+v", d.Cases)
	}
	c := d.Cases[i]
	if strings.Join(c.Use, ",") != "a" {
		t.Errorf("over loopback: use %v, want a", c.Use)
	}
	if len(c.Profiles) != 1 || c.Profiles[0].Profile != "az-lossy" || strings.Join(c.Profiles[0].Use, ",") != "b" {
		t.Fatalf("profiles %+v: want az-lossy alone, using b", c.Profiles)
	}
	if line := c.Profiles[0].Line; !strings.HasPrefix(line, "use b; a is next, ") {
		t.Errorf("az-lossy line %q", line)
	}

	// A run over one path says which.
	one := declared(raw[:0:0], results.ContenderInfo{Name: "a"})
	one.Environment.NetworkPath = "container IP on bridge network"
	if got := Verdicts(one).Scope; !strings.HasPrefix(got, "Verdicts for one network path, container IP on bridge network;") {
		t.Errorf("single-path scope %q", got)
	}
}

// A second holder granted while the frozen holder's lease still ran fails
// no-early-grant with its count out of the trials; a lease lock that
// hands over once the lease ran out (a double grant the fenced store is
// for) and a lock that never grants a second holder pass. The pitfall
// that fails is named to avoid in every row that requires it, never
// picked.
func TestEarlyGrantFailsThePitfall(t *testing.T) {
	raw := holderRecs("lease", 10, 10)
	raw = append(raw, holderRecs("pool", 5, 5)...)
	raw = slices.DeleteFunc(raw, func(x results.Raw) bool { return x.Contender == "pool" && x.Variant == "pause" })
	raw = append(raw, rec("safety", "pool", "pause", ms("trials", "count", 2, 2), ms("not_granted", "count", 0, 0), ms("early_grants", "count", 1, 2), ms("double_grants", "count", 2, 2))...)
	raw = append(raw, rec("failover", "lease", "minority-down", ms("unavailable_ms", "ms", 30, 40), ms("grants_while_down", "count", 900, 1000))...)
	raw = append(raw, rec("safety", "session", "pause", ms("trials", "count", 2, 2), ms("not_granted", "count", 2, 2), ms("early_grants", "count", 0, 0), ms("double_grants", "count", 0, 0))...)
	run := declaredRun(raw, results.ContenderInfo{Name: "lease", Family: "x"},
		results.ContenderInfo{Name: "session", Family: "pg"}, results.ContenderInfo{Name: "pool", Family: "pg", Pitfall: true})
	for c, want := range map[string]struct {
		mark Mark
		cell string
	}{
		"lease":   {Holds, "0 of 2 trials: a second holder within half a lease"},
		"session": {Holds, "0 of 2 trials: a second holder within half a lease"},
		"pool":    {Fails, "2 of 2 trials: a second holder within half a lease"},
	} {
		if v := run.Capability(c, "no-early-grant"); v.Mark != want.mark || v.Cell != want.cell {
			t.Errorf("%s: %v %q, want %v %q", c, v.Mark, v.Cell, want.mark, want.cell)
		}
	}
	if !slices.Contains(run.MatrixIDs(), "no-early-grant") {
		t.Errorf("the matrix %v lacks no-early-grant", run.MatrixIDs())
	}
	avoid := "pool (✗ " + run.Ref("no-early-grant") + ": worst of 2: 2 trials with a second holder granted within half a lease of the freeze)"
	for _, prefix := range []string{"Batch jobs", "Leader election", "Holders"} {
		p, ok := run.Decide(useCase(prefix))
		if !ok {
			t.Fatalf("no pick for %s", prefix)
		}
		a := run.Advise(p)
		if slices.Contains(a.Use, "pool") || !strings.Contains(a.Line, "avoid "+avoid) && !strings.Contains(a.Line, ", "+avoid) {
			t.Errorf("%s: %q does not avoid the pitfall with its early grants", prefix, a.Line)
		}
		if !slices.Contains(p.Required, "no-early-grant") {
			t.Errorf("%s requires %v, not no-early-grant", prefix, p.Required)
		}
	}
}

// A run recorded before the suite counted early grants is decided on
// the requirements it declares: its rows stay.
func TestRunWithoutEarlyGrantsStillDecides(t *testing.T) {
	r := declared(holderRecs("a", 10, 10), results.ContenderInfo{Name: "a", Family: "x"})
	for i, s := range r.Scenarios {
		r.Scenarios[i].Decides = slices.DeleteFunc(slices.Clone(s.Decides), func(d results.DecisionFigure) bool { return d.ID == "no-early-grant" })
	}
	run := New(r)
	p, ok := run.Decide(useCase("Holders"))
	if !ok || strings.Join(p.Supports, ",") != "a" || slices.Contains(p.Required, "no-early-grant") {
		t.Errorf("pick %+v (%v): want a, on the declared requirements", p.Supports, ok)
	}
}
