package run

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// scriptedLocker is a stand-in lock for testing the harness itself (not a
// measured system): Acquire takes acquireIn, Release takes releaseIn, and
// err, when set, is returned by Acquire.
type scriptedLocker struct {
	acquireIn, releaseIn time.Duration
	err                  error
	lost                 bool
}

func (s *scriptedLocker) Acquire(ctx context.Context, _ string) (bench.Held, error) {
	select {
	case <-time.After(s.acquireIn):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.err != nil {
		return nil, s.err
	}
	h := &scriptedHeld{s: s, lost: make(chan struct{})}
	if s.lost {
		close(h.lost)
	}
	return h, nil
}
func (s *scriptedLocker) Close() error { return nil }

type scriptedHeld struct {
	s    *scriptedLocker
	lost chan struct{}
}

func (h *scriptedHeld) Token() (uint64, bool) { return 0, false }
func (h *scriptedHeld) Lost() <-chan struct{} { return h.lost }
func (h *scriptedHeld) Release(context.Context) error {
	time.Sleep(h.s.releaseIn)
	return nil
}

// fakeServer is a server whose CPU clock never moves.
type fakeServer struct{ name string }

func (f fakeServer) Name() string    { return f.name }
func (f fakeServer) Addr() string    { return f.name + ":1" }
func (f fakeServer) OpsAddr() string { return "" }
func (fakeServer) CPU(context.Context) (time.Duration, string, bool, error) {
	return 0, "fake", true, nil
}
func (fakeServer) Kill(context.Context) error    { return bench.ErrNotSupported }
func (fakeServer) Stop(context.Context) error    { return bench.ErrNotSupported }
func (fakeServer) Restart(context.Context) error { return bench.ErrNotSupported }
func (fakeServer) Pause(context.Context) error   { return bench.ErrNotSupported }
func (fakeServer) Unpause(context.Context) error { return bench.ErrNotSupported }
func (fakeServer) Cut(context.Context) error     { return bench.ErrNotSupported }
func (fakeServer) Restore(context.Context) error { return bench.ErrNotSupported }

// fakeDeployment has one server of every spec.
type fakeDeployment struct{}

func (fakeDeployment) Servers(spec string) []bench.Server { return []bench.Server{fakeServer{spec}} }
func (fakeDeployment) Describe(env *results.Environment)  { env.Backend = "local" }
func (fakeDeployment) Close() error                       { return nil }

func TestRunnerPlansRecordsAndStopsPartial(t *testing.T) {
	open := func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
		return &scriptedLocker{}, nil
	}
	ra, rf := &bench.ServerSpec{Name: "ra"}, &bench.ServerSpec{Name: "rf"}
	contenders := []bench.Contender{
		{Name: "a", Label: "A", Family: "fa", Colour: "#010203", Server: ra, New: open,
			Settings: results.Settings{"wait": "x", "lease": "a contender cannot override the run's lease"}},
		{Name: "spin", Server: ra, New: open, ContendedOnly: true},
		{Name: "floor", Server: rf, New: open, Floor: true},
	}
	var runs []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	variant := func(name string, contended bool) bench.Variant {
		return bench.Variant{Name: name, Contended: contended, Estimate: time.Second,
			Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
				runs = append(runs, name+"/"+env.Contender.Name)
				if len(env.Addrs) != 1 || env.Addrs[0] != env.Contender.Server.Name+":1" {
					t.Errorf("%s: addresses %v", env.Contender.Name, env.Addrs)
				}
				if env.Contender.Name == "floor" && name == "broken" {
					return results.Raw{}, errors.New("boom")
				}
				if len(runs) == 6 {
					cancel()
					return results.Raw{}, ctx.Err()
				}
				return results.Raw{Metrics: []results.Metric{{Name: "m", Unit: "u", Value: float64(len(runs))}}}, nil
			}}
	}
	scen := []bench.Scenario{
		{Name: "s1", Floors: true, Metrics: []results.MetricSpec{{Name: "m", Unit: "u", Better: results.BetterHigher}},
			ContenderSettings: func(c bench.Contender) results.Settings { return results.Settings{"stop": "by " + c.Name} },
			Settings:          func(bool) results.Settings { return results.Settings{"k": "v"} },
			Variants:          func(bool) []bench.Variant { return []bench.Variant{variant("broken", false), variant("shared", true)} }},
		{Name: "s2",
			Settings: func(bool) results.Settings { return nil },
			Variants: func(bool) []bench.Variant { return []bench.Variant{variant("never", false)} }},
	}
	r := &Runner{Scenarios: scen, Contenders: contenders, Deployment: fakeDeployment{}, Lease: time.Second}
	res := &results.Results{}
	err := r.Run(ctx, res)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	want := "broken/a broken/floor shared/a shared/spin shared/floor never/a"
	if got := strings.Join(runs, " "); got != want {
		t.Fatalf("run order %q, want %q (spin only where contended, floors only where allowed)", got, want)
	}
	if !res.Partial || !strings.Contains(res.PartialReason, "interrupted") {
		t.Fatalf("partial=%v reason=%q", res.Partial, res.PartialReason)
	}
	if len(res.Raw) != 4 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "boom") {
		t.Fatalf("raw %d notes %q; want 4 records and the failed floor noted", len(res.Raw), res.Notes)
	}
	if res.Parameters.Contender["a"]["lease"] != "1s" || res.Parameters.Contender["a"]["wait"] != "x" || res.Parameters.Contender["floor"]["stop"] != "by floor" {
		t.Fatalf("contender parameters %v", res.Parameters.Contender["a"])
	}
	if len(res.Summary) != 4 || res.Summary[0].Scenario != "s1" || res.Summary[0].Better != bench.HigherIsBetter {
		t.Fatalf("summary %+v", res.Summary)
	}
	if len(res.Scenarios) != 2 || res.Scenarios[0].Name != "s1" || len(res.Scenarios[0].Metrics) != 1 ||
		!reflect.DeepEqual(res.Scenarios[0].Variants, []results.VariantInfo{{Name: "broken"}, {Name: "shared", VariantParams: results.VariantParams{Contended: true}}}) {
		t.Fatalf("scenario info %+v", res.Scenarios)
	}
	want0 := results.ContenderInfo{Name: "a", Label: "A", Family: "fa", Colour: "#010203"}
	if len(res.Contenders) != 3 || !reflect.DeepEqual(res.Contenders[0], want0) || !res.Contenders[1].ContendedOnly ||
		!res.Contenders[2].Floor || res.Contenders[2].Label != "floor" {
		t.Fatalf("contender info %+v", res.Contenders)
	}
	if err := CheckDeployment(fakeDeployment{}, contenders); err != nil {
		t.Fatal(err)
	}
	if err := CheckDeployment(fakeDeployment{}, []bench.Contender{{Name: "x", Server: &bench.ServerSpec{Name: "x", Replicas: 2}}}); !errors.Is(err, bench.ErrNoServers) {
		t.Fatalf("CheckDeployment with a server missing = %v, want bench.ErrNoServers", err)
	}
}

// A variant that does not apply is recorded with its reason in each
// repetition's record, is not a failure, adds nothing to the summary and
// is told to Progress.
func TestRunnerRecordsSkips(t *testing.T) {
	open := func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
		return &scriptedLocker{}, nil
	}
	c := bench.Contender{Name: "a", Server: &bench.ServerSpec{Name: "ra"}, New: open}
	s := bench.Scenario{Name: "s", Settings: func(bool) results.Settings { return nil },
		Variants: func(bool) []bench.Variant {
			return []bench.Variant{{Name: "v", Run: func(context.Context, *bench.Env) (results.Raw, error) {
				return results.Raw{Skipped: "no minority"}, nil
			}}}
		}}
	p := &skipProgress{}
	r := &Runner{Scenarios: []bench.Scenario{s}, Contenders: []bench.Contender{c}, Deployment: fakeDeployment{}, Repetitions: 2, Lease: time.Second, Progress: p}
	res := &results.Results{}
	if err := r.Run(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	if len(res.Raw) != 2 || len(res.Notes) != 0 || len(res.Summary) != 0 {
		t.Fatalf("raw %+v, notes %q, summary %+v", res.Raw, res.Notes, res.Summary)
	}
	for i, x := range res.Raw {
		if x.Scenario != "s" || x.Variant != "v" || x.Contender != "a" || x.Repetition != i+1 || x.Skipped != "no minority" {
			t.Errorf("raw[%d] = %+v", i, x)
		}
	}
	if !reflect.DeepEqual(p.skipped, []string{"no minority", "no minority"}) {
		t.Errorf("progress told %q", p.skipped)
	}
}

// skipProgress keeps Step.Skipped of every finished step.
type skipProgress struct{ skipped []string }

func (p *skipProgress) Start(Step) {}
func (p *skipProgress) Finish(s Step, err error) {
	p.skipped = append(p.skipped, s.Skipped)
}

// An interleaved variant runs once per repetition for all its contenders;
// each contender gets its own record or its own failure.
func TestRunnerInterleaved(t *testing.T) {
	open := func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
		return &scriptedLocker{}, nil
	}
	ra, rf := &bench.ServerSpec{Name: "ra"}, &bench.ServerSpec{Name: "rf"}
	contenders := []bench.Contender{
		{Name: "a", Server: ra, New: open},
		{Name: "spin", Server: ra, New: open, ContendedOnly: true},
		{Name: "floor", Server: rf, New: open, Floor: true},
	}
	var calls [][]string
	v := bench.Variant{Name: "w1", Estimate: time.Second,
		Interleaved: func(_ context.Context, envs []*bench.Env) ([]results.Raw, []error) {
			var names []string
			raws, errs := make([]results.Raw, len(envs)), make([]error, len(envs))
			for i, e := range envs {
				names = append(names, e.Contender.Name)
				raws[i].Metrics = []results.Metric{{Name: "m", Unit: "u", Value: float64(i)}}
				if e.Contender.Name == "floor" && len(calls) == 1 {
					errs[i] = errors.New("boom")
				}
				if e.Contender.Name == "a" && len(calls) == 1 {
					raws[i] = results.Raw{Skipped: "not here"}
				}
			}
			calls = append(calls, names)
			return raws, errs
		}}
	scen := []bench.Scenario{{Name: "latency", Floors: true, Settings: func(bool) results.Settings { return nil },
		Variants: func(bool) []bench.Variant { return []bench.Variant{v} }}}
	r := &Runner{Scenarios: scen, Contenders: contenders, Deployment: fakeDeployment{}, Lease: time.Second, Repetitions: 2}
	res := &results.Results{}
	if err := r.Run(context.Background(), res); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Run = %v, want the floor's failure", err)
	}
	if len(calls) != 2 || strings.Join(calls[0], " ") != "a floor" {
		t.Fatalf("calls %v, want two (one per repetition) with a and floor", calls)
	}
	var got []string
	for _, x := range res.Raw {
		got = append(got, fmt.Sprintf("%s/%d", x.Contender, x.Repetition))
	}
	if strings.Join(got, " ") != "a/1 floor/1 a/2" || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "latency/w1/floor repetition 2") {
		t.Fatalf("records %v notes %q", got, res.Notes)
	}
	// a's second repetition was not measured: recorded with its reason,
	// left out of a's summary row.
	if res.Raw[2].Skipped != "not here" || len(res.Raw[2].Metrics) != 0 {
		t.Errorf("a/2 = %+v, want a skipped record", res.Raw[2])
	}
	for _, x := range res.Summary {
		if x.Contender == "a" && x.N != 1 {
			t.Errorf("a's summary row %+v aggregates the skipped repetition", x)
		}
	}
}

func TestRunnerCapsVariantRepetitions(t *testing.T) {
	open := func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
		return &scriptedLocker{}, nil
	}
	contenders := []bench.Contender{{Name: "a", Server: &bench.ServerSpec{Name: "ra"}, New: open}}
	var runs []string
	variant := func(name string, maxReps int) bench.Variant {
		return bench.Variant{Name: name, Estimate: time.Second, MaxRepetitions: maxReps,
			Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
				runs = append(runs, name)
				return results.Raw{}, nil
			}}
	}
	r := &Runner{Repetitions: 3, Contenders: contenders, Deployment: fakeDeployment{}, Lease: time.Second,
		Scenarios: []bench.Scenario{{Name: "s",
			Settings: func(bool) results.Settings { return nil },
			Variants: func(bool) []bench.Variant { return []bench.Variant{variant("all", 0), variant("once", 1)} }}}}
	if err := r.Run(context.Background(), &results.Results{}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(runs, " "), "all all all once"; got != want {
		t.Fatalf("runs %q, want %q", got, want)
	}
}

// A contender's Repeat gives it more repetitions of a variant than the
// variant's cap in a full run, alone after the others' last; a quick run
// keeps the variant's count; the settings say so in a full run.
func TestRunnerRepeatsVariantForOneContender(t *testing.T) {
	open := func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
		return &scriptedLocker{}, nil
	}
	ra := &bench.ServerSpec{Name: "ra"}
	repeat := bench.Repeat{Scenario: "s", Variant: "once", Times: 3, Reason: "flipped"}
	contenders := []bench.Contender{{Name: "a", Server: ra, New: open}, {Name: "b", Server: ra, New: open, Repeats: []bench.Repeat{repeat}}}
	for _, tt := range []struct {
		quick bool
		want  string
	}{{false, "a/once/1 b/once/1 b/once/2 b/once/3"}, {true, "a/once/1 b/once/1"}} {
		v := bench.Variant{Name: "once", Estimate: time.Second, MaxRepetitions: 1,
			Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) { return results.Raw{}, nil }}
		r := &Runner{Repetitions: 3, Quick: tt.quick, Contenders: contenders, Deployment: fakeDeployment{}, Lease: time.Second,
			Scenarios: []bench.Scenario{{Name: "s",
				Settings: func(bool) results.Settings { return nil },
				Variants: func(bool) []bench.Variant { return []bench.Variant{v} }}}}
		res := &results.Results{}
		if err := r.Run(context.Background(), res); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range res.Raw {
			got = append(got, fmt.Sprintf("%s/%s/%d", x.Contender, x.Variant, x.Repetition))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("quick=%v: records %v, want %s", tt.quick, got, tt.want)
		}
		if set, ok := res.Parameters.Contender["b"]["repeat_1"]; ok == tt.quick || (ok && set != repeat.String()) {
			t.Errorf("quick=%v: b's settings repeat_1 = %q (%v)", tt.quick, set, ok)
		}
	}
}

// The ETA scales the steps left by actual/estimated of the measured steps;
// a contender skipped in a repetition costs nothing in the later ones and
// stays out of the scale.
func TestETA(t *testing.T) {
	ra := &bench.ServerSpec{Name: "ra"}
	contenders := []bench.Contender{{Name: "a", Server: ra}, {Name: "b", Server: ra}}
	v := bench.Variant{Name: "v", Estimate: time.Second, Run: func(context.Context, *bench.Env) (results.Raw, error) { return results.Raw{}, nil }}
	w := bench.Variant{Name: "w", Estimate: time.Second, Interleaved: func(context.Context, []*bench.Env) ([]results.Raw, []error) { return nil, nil }}
	s := bench.Scenario{Name: "s", Variants: func(bool) []bench.Variant { return []bench.Variant{v, w} }}
	r := &Runner{Scenarios: []bench.Scenario{s}, Contenders: contenders}
	steps := r.plan(2) // v a/1 b/1 a/2 b/2, w ab/1 ab/2
	if len(steps) != 6 {
		t.Fatalf("%d steps", len(steps))
	}
	m := etaModel{skips: map[string]bool{}}
	if got := m.remaining(steps); got != 8*time.Second {
		t.Fatalf("remaining at the start %v, want 8s", got)
	}
	m.learn(&steps[0], []results.Raw{{Contender: "a", Skipped: "no"}}, []error{nil}, time.Millisecond)
	m.learn(&steps[1], []results.Raw{{Contender: "b"}}, []error{nil}, 2*time.Second)
	// a/2 is free; b/2 and the interleaved steps take twice their estimate.
	if got := m.remaining(steps[2:]); got != 10*time.Second {
		t.Fatalf("remaining after a skip %v, want 10s", got)
	}
	m.learn(&steps[4], []results.Raw{{Contender: "a"}, {Contender: "b", Skipped: "no"}}, []error{nil, nil}, 2*time.Second)
	if got := m.remaining(steps[5:]); got != 2*time.Second {
		t.Fatalf("remaining of the interleaved step without b %v, want 2s", got)
	}
}

// A variant with more sessions than a contender's MaxSessions is skipped at
// once, so the ETA does not count it.
func TestETASessionsBeyondMaxSessions(t *testing.T) {
	ra := &bench.ServerSpec{Name: "ra"}
	contenders := []bench.Contender{{Name: "a", Server: ra}, {Name: "pool", Server: ra, MaxSessions: 80}}
	run := func(context.Context, *bench.Env) (results.Raw, error) { return results.Raw{}, nil }
	small := bench.Variant{Name: "small", Estimate: time.Second, Sessions: 80, Run: run}
	big := bench.Variant{Name: "big", Estimate: 10 * time.Second, Sessions: 1000, Run: run}
	s := bench.Scenario{Name: "s", Variants: func(bool) []bench.Variant { return []bench.Variant{small, big} }}
	steps := (&Runner{Scenarios: []bench.Scenario{s}, Contenders: contenders}).plan(1)
	m := etaModel{skips: map[string]bool{}}
	if got := m.remaining(steps); got != 12*time.Second {
		t.Fatalf("remaining %v, want 12s: small for both, big for a alone", got)
	}
}

// A variant's Skip decides before the run: the contender it skips costs
// the ETA nothing, gets a record with the reason, and its Run is never
// called.
func TestVariantSkip(t *testing.T) {
	open := func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
		return &scriptedLocker{}, nil
	}
	ra := &bench.ServerSpec{Name: "ra"}
	contenders := []bench.Contender{{Name: "a", Server: ra, New: open}, {Name: "b", Server: ra, New: open}}
	ran := map[string]int{}
	v := bench.Variant{Name: "v", Estimate: time.Second,
		Skip: func(c bench.Contender) string {
			if c.Name == "b" {
				return "not b"
			}
			return ""
		},
		Run: func(_ context.Context, env *bench.Env) (results.Raw, error) {
			ran[env.Contender.Name]++
			return results.Raw{}, nil
		}}
	s := bench.Scenario{Name: "s", Settings: func(bool) results.Settings { return nil }, Variants: func(bool) []bench.Variant { return []bench.Variant{v} }}
	r := &Runner{Scenarios: []bench.Scenario{s}, Contenders: contenders, Deployment: fakeDeployment{}, Lease: time.Second}
	m := etaModel{skips: map[string]bool{}}
	if got := m.remaining(r.plan(1)); got != time.Second {
		t.Fatalf("remaining %v, want 1s: b is skipped", got)
	}
	res := &results.Results{}
	if err := r.Run(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	if len(res.Raw) != 2 || res.Raw[1].Contender != "b" || res.Raw[1].Skipped != "not b" || ran["b"] != 0 || ran["a"] != 1 {
		t.Fatalf("records %+v, runs %v: want a run for a and a skip saying why for b", res.Raw, ran)
	}
}

// TestContenderCaps: a contender's cap leaves it out of the variants it
// matches (full or quick only), interleaved or not, with the reason as its
// record and in its settings, and out of the plan's estimate.
func TestContenderCaps(t *testing.T) {
	open := func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
		return &scriptedLocker{}, nil
	}
	ra := &bench.ServerSpec{Name: "ra"}
	capped := bench.Contender{Name: "c", Server: ra, New: open, Caps: []bench.Cap{
		{Scenario: "s", Variant: "big-*", Reason: "too big"},
		{Scenario: "*", Variant: "w1", QuickOnly: true, Reason: "quick"},
	}}
	contenders := []bench.Contender{{Name: "a", Server: ra, New: open}, capped}
	ran := map[string]int{}
	run := func(_ context.Context, env *bench.Env) (results.Raw, error) {
		ran[env.Contender.Name]++
		return results.Raw{}, nil
	}
	inter := func(_ context.Context, envs []*bench.Env) ([]results.Raw, []error) {
		for _, e := range envs {
			ran[e.Contender.Name]++
		}
		return make([]results.Raw, len(envs)), make([]error, len(envs))
	}
	vs := []bench.Variant{
		{Name: "big-1", Estimate: time.Second, Run: run},
		{Name: "small", Estimate: time.Second, Run: run},
		{Name: "w1", Estimate: time.Second, Interleaved: inter},
	}
	s := bench.Scenario{Name: "s", Settings: func(bool) results.Settings { return nil }, Variants: func(bool) []bench.Variant { return vs }}
	for _, quick := range []bool{false, true} {
		clear(ran)
		r := &Runner{Scenarios: []bench.Scenario{s}, Contenders: contenders, Deployment: fakeDeployment{}, Lease: time.Second, Quick: quick}
		want := 5 * time.Second // a: 3 variants; c: small and w1
		if quick {
			want = 4 * time.Second
		}
		if p := r.Plan(); p.Total != want || p.Scenario["s"] != want {
			t.Errorf("quick=%v: plan %+v, want %v", quick, p, want)
		}
		res := &results.Results{}
		if err := r.Run(context.Background(), res); err != nil {
			t.Fatal(err)
		}
		skips := map[string]string{}
		for _, x := range res.Raw {
			if x.Contender == "c" && x.Skipped != "" {
				skips[x.Variant] = x.Skipped
			}
		}
		if skips["big-1"] != "capped: too big" || (skips["w1"] != "") == !quick || skips["small"] != "" {
			t.Errorf("quick=%v: c's skips %v", quick, skips)
		}
		if wantC := map[bool]int{false: 2, true: 1}[quick]; ran["c"] != wantC || ran["a"] != 3 {
			t.Errorf("quick=%v: runs %v", quick, ran)
		}
		if set := res.Parameters.Contender["c"]; set["cap_1"] != "s/big-*: too big" || set["cap_2"] != "*/w1 (quick): quick" {
			t.Errorf("c's settings %v do not list its caps", set)
		}
	}
}

// TestRunnerUnderNetwork: under a network profile every record carries it
// and its variant's name ends in @profile; the summary keeps it per row.
func TestRunnerUnderNetwork(t *testing.T) {
	open := func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
		return &scriptedLocker{}, nil
	}
	c := bench.Contender{Name: "a", Server: &bench.ServerSpec{Name: "ra"}, New: open}
	s := bench.Scenario{Name: "s", Settings: func(bool) results.Settings { return nil },
		Variants: func(bool) []bench.Variant {
			return []bench.Variant{{Name: "v", Run: func(context.Context, *bench.Env) (results.Raw, error) {
				return results.Raw{Metrics: []results.Metric{{Name: "m", Unit: "us", Value: 1}}}, nil
			}}}
		}}
	r := &Runner{Scenarios: []bench.Scenario{s}, Contenders: []bench.Contender{c}, Deployment: fakeDeployment{}, Lease: time.Second, Network: "az"}
	res := &results.Results{}
	if err := r.Run(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	if len(res.Raw) != 1 || res.Raw[0].Variant != "v@az" || res.Raw[0].Network != "az" {
		t.Fatalf("raw %+v", res.Raw)
	}
	if len(res.Summary) != 1 || res.Summary[0].Variant != "v@az" || res.Summary[0].Network != "az" {
		t.Fatalf("summary %+v", res.Summary)
	}
}
