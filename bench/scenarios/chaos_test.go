package scenarios

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/local"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/faults/nemesis"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/run"
	"github.com/monolock/monolock-bench/redisbench"
)

// TestChaosSoak runs the chaos scenario's quick schedule (one fault of
// each kind) with real faults — client processes frozen, their proxy
// links blackholed both ways and one way, servers killed and restarted
// and frozen, a Redis's wall clock stepped — against real servers on the
// local backend, for monolock and redis, and checks what must hold
// whatever the faults' timing: every scheduled fault applied (start
// before end) or skipped with its reason, every client's history
// well-formed and working, the verdict computed, and what a correct store
// guarantees (each register linearizable against its model; the fenced
// counter loses no update, since fenced reads fence the old holder out).
// Whether Redis shows a violation depends on where the faults strike: it
// is logged, not asserted.
func TestChaosSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fault schedule per contender")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := holder.Command{Path: exe, Env: append(os.Environ(), childEnv+"=1")}
	cs := []bench.Contender{monolock.Contender(), redisbench.RedisContender(), redisbench.RedisSpinContender()}
	specs, err := bench.Specs(cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// Started to record, as a run of the chaos scenario alone is:
	// monolock's audit log is its servers' view.
	d, err := local.StartOn(ctx, specs, nil, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })

	const lease = 600 * time.Millisecond
	out := t.TempDir()
	// Side by side: monolock and redis have servers of their own, so they
	// run at once; redis-spin is skipped.
	cfg := ChaosConfig{Holder: cmd, Seed: 24, Parallel: 2}
	sched, err := cfg.schedule(lease, true)
	if err != nil {
		t.Fatal(err)
	}
	r := run.Runner{Scenarios: []bench.Scenario{cfg.Scenario()}, Contenders: cs, Deployment: d, Lease: lease, Quick: true, OutDir: out}
	res := &results.Results{SchemaVersion: results.SchemaVersion, RunID: "chaos", StartedAt: time.Now()}
	d.Describe(&res.Environment)
	if err := r.Run(ctx, res); err != nil {
		t.Fatal(err)
	}
	if err := res.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(res.Raw) != len(cs) {
		t.Fatalf("%d records, want one per contender", len(res.Raw))
	}
	for _, raw := range res.Raw {
		t.Run(raw.Contender, func(t *testing.T) {
			if raw.Contender == "redis-spin" {
				if raw.Skipped == "" || raw.Chaos != nil {
					t.Errorf("redis-spin was not skipped: %+v", raw)
				}
				return
			}
			if raw.Skipped != "" || raw.Chaos == nil {
				t.Fatalf("no chaos record (skipped: %q)", raw.Skipped)
			}
			c := raw.Chaos
			t.Logf("errors %v; verdict %s; faults %v skipped %v; exclusion %+v; rate %+v", raw.Errors, c.Verdict.Valid, c.Verdict.Faults, c.Verdict.SkipReasons, c.Verdict.Exclusion, c.Verdict.Rate)
			for _, s := range c.Verdict.Stores {
				t.Logf("%s: %s; accepted %d of %d writes; linearizable %s; stale %d (rejected %d); lost %d of %d acknowledged (final %v)",
					s.Store, s.Valid, s.Accepted, s.Writes, s.Linearizable.Valid, s.StaleWrites.Count, s.Rejected, s.LostUpdates.Count, s.Acknowledged, s.Final)
			}
			if c.CPU == nil || c.CPU.ClientsMS <= 0 || c.CPU.Seconds < sched.Span().Seconds() || c.CPU.ServerSource == "" {
				t.Errorf("CPU of the clients and servers: %+v", c.CPU)
			}
			if c.Seed != 24 || c.History != "histories/"+raw.Contender+".jsonl" {
				t.Errorf("seed %d, history %q", c.Seed, c.History)
			}
			f, err := os.Open(filepath.Join(out, c.History))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			h, err := check.ReadHistory(f)
			if err != nil {
				t.Fatalf("the history in the run folder does not read back: %v", err)
			}

			// Every scheduled fault: applied with start < end, or skipped
			// with its reason.
			if n := len(h.Faults) + len(h.Skipped) + len(h.Failed); n != len(sched.Faults) {
				t.Errorf("%d applied, %d skipped, %d failed faults; the schedule has %d", len(h.Faults), len(h.Skipped), len(h.Failed), len(sched.Faults))
			}
			for _, fs := range h.Faults {
				if fs.From >= fs.To {
					t.Errorf("fault %d (%s) from %d to %d", fs.ID, fs.Fault.Kind, fs.From, fs.To)
				}
			}
			wantSkip := []string{}
			if raw.Contender == "monolock" {
				wantSkip = []string{string(nemesis.ClockStep)}
			}
			var skipped []string
			for _, e := range h.Skipped {
				skipped = append(skipped, e.Fault.Kind)
				if e.Error == "" {
					t.Errorf("fault %d skipped without a reason", e.ID)
				}
			}
			if !slices.Equal(skipped, wantSkip) {
				t.Errorf("skipped kinds %v, want %v", skipped, wantSkip)
			}
			if len(h.Failed) > 0 {
				t.Errorf("faults failed to apply: %+v", h.Failed)
			}

			// The servers' own view: each watcher (redis's TTL reads,
			// monolock's audit log) recorded its grants (the lock changed
			// hands below), and every running overlap is classified or
			// counted unclassified.
			grants := 0
			for _, i := range h.ServerEvents {
				if h.Events[i].F == check.ServerGrant {
					grants++
				}
			}
			b := c.Verdict.Blame
			if c.ServerRecord == "" || b == nil || grants == 0 {
				t.Errorf("server record %q (none: %q), %d server grants recorded, blame %+v", c.ServerRecord, c.NoServerRecord, grants, b)
			} else if n := b.ServerEarly + b.ClientLate + b.Both + b.Unclassified; n != *c.Verdict.Running {
				t.Errorf("%d overlaps classified, %d running", n, *c.Verdict.Running)
			}
			t.Logf("%d server grants recorded; running overlaps by class %+v", grants, b)

			// Every client took part (asked for the lock), and the lock
			// changed hands. Which clients were granted depends on where
			// the faults struck: a client paused, cut off or restarted
			// away while queued loses its place, and under CI load a
			// quick run makes only a few grants (9 once), so one client
			// may go without. FIFO order is the fairness test's to check.
			asked, granted := map[string]int{}, map[string]int{}
			for _, op := range h.Ops {
				if op.Invoke.F != check.Acquire {
					continue
				}
				asked[op.Invoke.Process]++
				if op.Outcome() == check.OK {
					granted[op.Invoke.Process]++
				}
			}
			for i := range DefaultChaosClients {
				if name := fmt.Sprintf("c%d", i+1); asked[name] == 0 {
					t.Errorf("client %s never asked for the lock", name)
				}
			}
			if len(granted) < 2 {
				t.Errorf("only %d client(s) granted: %v", len(granted), granted)
			}
			if len(c.Timeline.Lanes) != DefaultChaosClients {
				t.Errorf("timeline lanes: %d", len(c.Timeline.Lanes))
			}

			// The verdict, and what a correct store guarantees.
			if !slices.Contains([]string{"valid", "invalid", "unknown"}, c.Verdict.Valid) || c.Verdict.Operations == 0 {
				t.Errorf("verdict %q over %d operations", c.Verdict.Valid, c.Verdict.Operations)
			}
			if len(c.Verdict.Stores) != 2 {
				t.Fatalf("stores %+v", c.Verdict.Stores)
			}
			for _, s := range c.Verdict.Stores {
				if s.Linearizable.Valid != "valid" {
					t.Errorf("%s register: %s (%s), %+v", s.Store, s.Linearizable.Valid, s.Linearizable.Reason, s.Linearizable.First)
				}
				if s.Store == check.StoreFenced && s.LostUpdates.Valid != "valid" {
					t.Errorf("fenced counter lost updates: %+v", s.LostUpdates)
				}
			}
			fig := map[string]float64{}
			for _, m := range raw.Metrics {
				fig[m.Name] = m.Value
			}
			if fig["faults"] != float64(len(h.Faults)) || fig["operations"] == 0 {
				t.Errorf("figures %v", fig)
			}
			if kept := fig["lock_kept_through_fault"] == fig["faults_on_holder"]; fig["no_handover_during_holder_fault"] != map[bool]float64{true: 1}[kept] {
				t.Errorf("no handover %v with %v of %v holder faults kept", fig["no_handover_during_holder_fault"], fig["lock_kept_through_fault"], fig["faults_on_holder"])
			}
			if r := c.Verdict.Running; r == nil || float64(*r) != fig["double_holders_running"] || *r > c.Verdict.Exclusion.Count {
				t.Errorf("running double holders %v, figure %v, of %d", r, fig["double_holders_running"], c.Verdict.Exclusion.Count)
			}
			_, fencedFigure := fig["stale_writes_fenced"]
			if c.Tokens != (raw.Contender == "monolock") || fencedFigure != c.Tokens {
				t.Errorf("tokens %v, fenced figures %v", c.Tokens, fencedFigure)
			}
		})
	}
}

// TestHolderFaults: of the client faults, those that began while their
// target held the lock count, with the time to the next grant to another
// client and whether the lock stayed with the target through the fault.
func TestHolderFaults(t *testing.T) {
	const ms = check.Mono(1_000_000)
	var events []check.Event
	ids := map[string]int64{}
	op := func(p string, f check.Func, call, ret check.Mono, result check.Event) {
		ids[p]++
		events = append(events, check.Event{T: call * ms, Process: p, Type: check.Invoke, F: f, ID: ids[p]})
		result.T, result.Process, result.Type, result.F, result.ID = ret*ms, p, check.OK, f, ids[p]
		events = append(events, result)
	}
	fault := func(id int64, kind, target string, from, to check.Mono) {
		fd := &check.Fault{Kind: kind, Target: target}
		events = append(events,
			check.Event{T: from * ms, Process: check.NemesisProcess, Type: check.Start, F: check.FuncFault, ID: id, Fault: fd},
			check.Event{T: to * ms, Process: check.NemesisProcess, Type: check.End, F: check.FuncFault, ID: id, Fault: fd})
	}
	op("c1", check.Acquire, 1, 2, check.Event{})
	op("c2", check.Acquire, 3, 40, check.Event{}) // waits through fault 1
	fault(1, "client-pause", "c1", 10, 30)        // c1 holds: kept (c2 granted at 40, after the end)
	op("c1", check.Release, 35, 36, check.Event{})
	fault(2, "client-pause", "c1", 38, 60) // c1 no longer holds: not counted
	fault(3, "client-host-loss", "c2", 45, 70)
	op("c3", check.Acquire, 41, 50, check.Event{}) // granted during fault 3: handed over
	op("c2", check.Release, 75, 76, check.Event{})
	fault(4, "server-kill", "srv", 80, 90) // not a client fault
	h, err := check.NewHistory(events)
	if err != nil {
		t.Fatal(err)
	}
	got := holderFaults(h)
	want := []results.ChaosHolderFault{
		{ID: 1, Kind: "client-pause", Target: "c1", FaultMS: 20, HandoverMS: 30, Kept: true},
		{ID: 3, Kind: "client-host-loss", Target: "c2", FaultMS: 25, HandoverMS: 5},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("holder faults\n got %+v\nwant %+v", got, want)
	}
}

// TestChaosSchedule: the schedule depends on the seed, the lease, the
// clients and the counts alone (every contender of a run gets the same);
// quick has one fault of each kind, full enough for the upper bound, and a
// duration scales the span.
func TestChaosSchedule(t *testing.T) {
	cfg := ChaosConfig{Seed: 99}
	a, err := cfg.schedule(2*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cfg.schedule(2*time.Second, false)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("the same config planned two schedules")
	}
	count := func(s nemesis.Schedule) map[nemesis.Kind]int {
		c := map[nemesis.Kind]int{}
		for _, f := range s.Faults {
			c[f.Kind]++
		}
		return c
	}
	full := count(a)
	if got := len(a.Faults) - full[nemesis.ClockStep]; got < check.TrialsForUpperBound(nemesis.FullUpperBound) {
		t.Errorf("full run: %d faults every contender can take, want at least %d", got, check.TrialsForUpperBound(nemesis.FullUpperBound))
	}
	q, _ := cfg.schedule(2*time.Second, true)
	for _, k := range nemesis.Kinds {
		if count(q)[k] != 1 {
			t.Errorf("quick run: %d faults of %s, want 1", count(q)[k], k)
		}
	}
	long := ChaosConfig{Seed: 99, Duration: 10 * time.Minute}
	l, err := long.schedule(2*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	if span := l.Span(); span < 8*time.Minute || span > 12*time.Minute {
		t.Errorf("a 10m duration planned a %v schedule", span)
	}
	s := cfg.Scenario()
	vs := s.Variants(false)
	if len(vs) != 1 || vs[0].Name != ChaosSoak || vs[0].MaxRepetitions != 1 || !vs[0].Contended || s.Floors {
		t.Errorf("variants %+v, floors %v", vs, s.Floors)
	}
	if set := s.Settings(false)["seed"]; !strings.HasPrefix(set, "99 ") {
		t.Errorf("seed setting %q", set)
	}
	one, other := (ChaosConfig{}).Scenario(), (ChaosConfig{}).Scenario()
	if one.Settings(true)["seed"] == other.Settings(true)["seed"] {
		t.Error("two scenarios without a seed drew the same one")
	}
}

// TestChaosSoakCounts: a soak's fault count gives every kind every
// contender takes its share and clock steps in the full run's proportion,
// quick or not, and says so in the settings; side by side divides the
// estimate and runs the contenders in one interleaved step.
func TestChaosSoakCounts(t *testing.T) {
	cfg := ChaosConfig{Seed: 7, Faults: 150, Parallel: 3}
	for _, quick := range []bool{false, true} {
		c := cfg.counts(2*time.Second, quick)
		for _, k := range nemesis.Kinds {
			want := 30
			if k == nemesis.ClockStep {
				want = 27 // 150 × 4/22
			}
			if c[k] != want {
				t.Errorf("quick %v: %d faults of %s, want %d", quick, c[k], k, want)
			}
		}
	}
	s := cfg.Scenario()
	if set := s.Settings(false)[results.ChaosSoakSetting]; !strings.HasPrefix(set, "150 faults per contender of the kinds every contender takes, and 27 clock steps") {
		t.Errorf("soak setting %q", set)
	}
	if _, ok := (ChaosConfig{Seed: 7}).Scenario().Settings(false)[results.ChaosSoakSetting]; ok {
		t.Error("a run without a fault count is marked a soak")
	}
	v := s.Variants(false)[0]
	one := (ChaosConfig{Seed: 7, Faults: 150}).Scenario().Variants(false)[0]
	if v.Interleaved == nil || one.Interleaved != nil || v.Estimate != one.Estimate/3 {
		t.Errorf("side by side: interleaved %v, estimate %v; one after another: interleaved %v, estimate %v", v.Interleaved != nil, v.Estimate, one.Interleaved != nil, one.Estimate)
	}
}

// TestChaosLanes: contenders sharing a server role share a lane, in
// order; a skipped one has none; the longest lane comes first.
func TestChaosLanes(t *testing.T) {
	a, b := &bench.ServerSpec{Name: "a"}, &bench.ServerSpec{Name: "b"}
	env := func(name string, s *bench.ServerSpec) *bench.Env {
		return &bench.Env{Contender: bench.Contender{Name: name, Server: s}}
	}
	envs := []*bench.Env{env("b1", b), env("a1", a), env("skip", a), env("a2", a)}
	lanes := chaosLanes(envs, func(i int) bool { return envs[i].Contender.Name != "skip" })
	if want := [][]int{{1, 3}, {0}}; fmt.Sprint(lanes) != fmt.Sprint(want) {
		t.Errorf("lanes %v, want %v", lanes, want)
	}
}

// TestChaosFigures: the verdict's figures are named by the chaos metrics,
// per store; an unknown linearizability is left out with a note; without
// tokens the fenced store's figures and the token order are left out.
func TestChaosFigures(t *testing.T) {
	store := func(name string, stale, lost, refused, afterLost int, lin check.Validity, hi float64) check.StoreVerdict {
		s := check.StoreVerdict{Store: name, Rate: check.Rate{Hi: hi}}
		s.StaleWrites.Count, s.LostUpdates.Lost = stale, lost
		s.StaleWrites.RefusedHolder.Count, s.StaleWrites.AfterLost = refused, afterLost
		s.Linearizability.Valid, s.Linearizability.Reason = lin, "porcupine timed out"
		return s
	}
	v := check.Verdict{Operations: 40, Rate: check.Rate{Hi: 0.5}, Stores: []check.StoreVerdict{
		store(check.StoreFenced, 0, 0, 4, 2, check.Valid, 0.1),
		store(check.StoreUnfenced, 2, 1, 0, 3, check.Unknown, 0.4),
	}}
	v.Faults.Applied, v.Exclusion.Count, v.Exclusion.Running, v.Exclusion.Overlapped = 6, 3, 1, 2500*time.Microsecond
	v.TokenOrder.Count = 5

	figures, notes := chaosFigures(v, true)
	got := map[string]float64{}
	for _, f := range figures {
		got[f.Name] = f.Value
	}
	want := map[string]float64{
		"faults": 6, "operations": 40, "double_holders": 3, "double_holders_running": 1, "double_holder_ms": 2.5,
		"writes_after_lost": 5, "lost_updates": 1, "violation_rate_hi": 0.5, "token_order_violations": 5,
		"stale_writes_fenced": 0, "lost_updates_fenced": 0, "holder_writes_refused_fenced": 4, "linearizable_fenced": 1, "violation_rate_hi_fenced": 0.1,
		"stale_writes_unfenced": 2, "lost_updates_unfenced": 1, "violation_rate_hi_unfenced": 0.4,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("figures\n got %v\nwant %v", got, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "linearizable_unfenced left out: porcupine timed out") {
		t.Errorf("notes %q", notes)
	}
	for _, f := range figures {
		if !slices.ContainsFunc(results.ChaosMetrics.List(), func(m results.MetricSpec) bool { return m.Name == f.Name && m.Unit == f.Unit }) {
			t.Errorf("%s (%s) is not a declared chaos metric", f.Name, f.Unit)
		}
	}

	figures, _ = chaosFigures(v, false)
	for _, f := range figures {
		if strings.HasSuffix(f.Name, "_fenced") || f.Name == results.ChaosMetrics.TokenOrderViolations.Name {
			t.Errorf("without tokens: %s", f.Name)
		}
	}

	// With the servers' view recorded, the running overlaps by class.
	v.Blame = check.Blames{Recorded: true, ServerEarly: 2, ClientLate: 3, Both: 1, Unclassified: 4}
	figures, _ = chaosFigures(v, true)
	got = map[string]float64{}
	for _, f := range figures {
		got[f.Name] = f.Value
	}
	cm := results.ChaosMetrics
	for m, n := range map[results.MetricSpec]float64{cm.OverlapsServerEarly: 2, cm.OverlapsClientLate: 3, cm.OverlapsBoth: 1, cm.OverlapsUnclassified: 4} {
		if got[m.Name] != n {
			t.Errorf("%s = %v, want %v", m.Name, got[m.Name], n)
		}
	}
}

// TestServerEvent: every kind a contender's watcher reports is a valid
// history event carrying what the watcher saw.
func TestServerEvent(t *testing.T) {
	ttl, token := 1500*time.Millisecond, uint64(7)
	for _, c := range []bench.LockChange{
		{Server: "etcd", Kind: bench.WatchStarted, Revision: 3},
		{Server: "etcd", Kind: bench.LockGranted, Key: "/k/1", Token: &token, Revision: 7},
		{Server: "redis", Kind: bench.LockRenewed, Key: "k", TTL: &ttl},
		{Server: "redis", Kind: bench.LockEnded, Key: "k", Cause: "expired"},
		{Server: "redis", Kind: bench.WatchBroken, Err: errors.New("connection reset")},
	} {
		rec := check.NewRecorder(io.Discard)
		e, err := rec.Record(serverEvent(c))
		if err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		if e.Type != check.Server || string(e.F) != string(c.Kind) || e.Process != c.Server || e.Key != c.Key || e.Rev != c.Revision || e.Cause != c.Cause {
			t.Errorf("%+v became %+v", c, e)
		}
	}
	e := serverEvent(bench.LockChange{Server: "redis", Kind: bench.LockGranted, Key: "k", TTL: &ttl})
	if e.TTLMS == nil || *e.TTLMS != 1500 {
		t.Errorf("ttl_ms %v, want 1500", e.TTLMS)
	}
}

// TestChaosPgBouncerPitfall runs a short soak of the pitfall
// (pg_advisory_lock through PgBouncer's transaction pooling) on the local
// backend: the step completes as any lock's does, its double holders are
// the checkers' figures (the finding, logged, not asserted), and the
// stranded watch reads the lock on the server once the clients stopped.
func TestChaosPgBouncerPitfall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fault schedule on PostgreSQL behind PgBouncer")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := holder.Command{Path: exe, Env: append(os.Environ(), childEnv+"=1")}
	cs := pgbouncerLocks()[:1]
	specs, err := bench.Specs(cs)
	if err != nil {
		t.Fatal(err)
	}
	d := benchtest.Start(t, specs...)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const lease = 600 * time.Millisecond
	// A soak (Faults set) of one fault of each kind the lock takes: the
	// suite's runs cap the PgBouncer rows' chaos step, the soak does not.
	r := run.Runner{Scenarios: []bench.Scenario{ChaosConfig{Holder: cmd, Seed: 24, Faults: 5}.Scenario()}, Contenders: cs, Deployment: d, Lease: lease, OutDir: t.TempDir()}
	res := &results.Results{SchemaVersion: results.SchemaVersion, RunID: "chaos-pgbouncer", StartedAt: time.Now()}
	d.Describe(&res.Environment)
	if err := r.Run(ctx, res); err != nil {
		t.Fatalf("the step failed (a harness failure, not the pitfall's finding): %v", err)
	}
	if len(res.Raw) != 1 || res.Raw[0].Chaos == nil {
		t.Fatalf("records %+v: want the pitfall's chaos record", res.Raw)
	}
	raw := res.Raw[0]
	fig := map[string]float64{}
	for _, m := range raw.Metrics {
		fig[m.Name] = m.Value
	}
	t.Logf("errors %v; verdict %s; exclusion %+v; figures %v", raw.Errors, raw.Chaos.Verdict.Valid, raw.Chaos.Verdict.Exclusion, fig)
	for _, m := range []string{"double_holders", "double_holders_running", "stranded_lock", "stranded_ms"} {
		if _, ok := fig[m]; !ok {
			t.Errorf("no %s figure", m)
		}
	}
	if fig["operations"] == 0 {
		t.Error("no operation recorded")
	}
}
