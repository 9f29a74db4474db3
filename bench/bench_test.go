package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/bench/output/results"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name, line string
		want       procStat
		wantErr    bool
	}{
		{"plain", "42 (redis-server) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 4 0 100 0 0",
			procStat{pgrp: 42, cpu: 2 * time.Second, children: 100 * time.Millisecond}, false},
		{"spaces and parens in comm", "7 (a b) (c)) R 1 9 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 5 0 0",
			procStat{pgrp: 9, cpu: 70 * time.Millisecond}, false},
		{"no comm", "garbage", procStat{}, true},
		{"short", "1 (x) S 1 2 3", procStat{}, true},
		{"not a number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 x 4 0 0", procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat(tt.line)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseProcStat = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestProcessGroupCPU reads the group of this test process, which holds
// at least the process itself.
func TestProcessGroupCPU(t *testing.T) {
	cpu, err := ProcessGroupCPU(syscall.Getpgrp())
	if err != nil {
		t.Fatal(err)
	}
	self, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if cpu < self {
		t.Errorf("group CPU %v < this process's %v", cpu, self)
	}
	if _, err := ProcessGroupCPU(-5); err == nil {
		t.Error("no error for a group without processes")
	}
}

func TestCPUOfThisProcess(t *testing.T) {
	self0, err := SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	proc0, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until both clocks moved: /proc counts in 10ms ticks.
	deadline := time.Now().Add(10 * time.Second)
	for x := 0; time.Now().Before(deadline); x++ {
		s, _ := SelfCPU()
		p, _ := ProcessCPU(os.Getpid())
		if s > self0 && p > proc0 {
			return
		}
	}
	t.Fatal("neither getrusage nor /proc/<pid>/stat saw the CPU this test burned")
}

// scriptedLocker is a stand-in lock for testing the harness itself (not a
// measured system): Acquire takes acquireIn, Release takes releaseIn, and
// err, when set, is returned by Acquire.
type scriptedLocker struct {
	acquireIn, releaseIn time.Duration
	err                  error
	lost                 bool
}

func (s *scriptedLocker) Acquire(ctx context.Context, _ string) (Held, error) {
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

func TestTimedMeasuresAroundTheSeam(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := NewRecorder()
		l := Timed(&scriptedLocker{acquireIn: 5 * time.Millisecond, releaseIn: 3 * time.Millisecond}, rec)
		for range 4 {
			if err := Cycle(t.Context(), l, "k", 2*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
		if rec.Cycles != 4 || rec.Failures != 0 {
			t.Fatalf("cycles %d failures %d", rec.Cycles, rec.Failures)
		}
		// Fake time is exact: acquire 5ms; cycle 5 + hold 2 + release 3.
		if got := time.Duration(rec.Acquire.ValueAtQuantile(50)); !within(got, 5*time.Millisecond) {
			t.Errorf("acquire p50 %v, want 5ms", got)
		}
		if got := time.Duration(rec.Cycle.Max()); !within(got, 10*time.Millisecond) {
			t.Errorf("cycle max %v, want 10ms", got)
		}
	})
}

// within allows HdrHistogram's 3-significant-digit bucketing.
func within(got, want time.Duration) bool {
	d := got - want
	return d >= -want/500 && d <= want/500
}

func TestTimedCountsFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := NewRecorder()
		gaveUp := fmt.Errorf("%w after 3 tries", ErrGaveUp)
		if _, err := Timed(&scriptedLocker{err: gaveUp}, rec).Acquire(t.Context(), "k"); !errors.Is(err, ErrGaveUp) {
			t.Fatal(err)
		}
		if _, err := Timed(&scriptedLocker{err: errors.New("connection refused")}, rec).Acquire(t.Context(), "k"); err == nil {
			t.Fatal("want an error")
		}
		// A worker stopped by the harness is not a failure of the lock.
		ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		defer cancel()
		if _, err := Timed(&scriptedLocker{acquireIn: time.Second}, rec).Acquire(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		if err := Cycle(t.Context(), Timed(&scriptedLocker{lost: true}, rec), "k", 0); err != nil {
			t.Fatal(err)
		}
		if rec.Failures != 2 || rec.GaveUp != 1 || rec.Lost != 1 || rec.Cycles != 1 || len(rec.Errors) != 2 {
			t.Fatalf("failures %d gave_up %d lost %d cycles %d errors %q; want 2 1 1 1 and two messages",
				rec.Failures, rec.GaveUp, rec.Lost, rec.Cycles, rec.Errors)
		}
	})
}

// fakeServer is a server whose CPU clock never moves.
type fakeServer struct{ name string }

func (f fakeServer) Name() string    { return f.name }
func (f fakeServer) Addr() string    { return f.name + ":1" }
func (f fakeServer) OpsAddr() string { return "" }
func (fakeServer) CPU(context.Context) (time.Duration, string, bool, error) {
	return 0, "fake", true, nil
}
func (fakeServer) Kill(context.Context) error    { return ErrNotSupported }
func (fakeServer) Stop(context.Context) error    { return ErrNotSupported }
func (fakeServer) Restart(context.Context) error { return ErrNotSupported }
func (fakeServer) Pause(context.Context) error   { return ErrNotSupported }
func (fakeServer) Unpause(context.Context) error { return ErrNotSupported }
func (fakeServer) Cut(context.Context) error     { return ErrNotSupported }
func (fakeServer) Restore(context.Context) error { return ErrNotSupported }

// fakeDeployment has one server of every spec.
type fakeDeployment struct{}

func (fakeDeployment) Servers(spec string) []Server      { return []Server{fakeServer{spec}} }
func (fakeDeployment) Describe(env *results.Environment) { env.Backend = "local" }
func (fakeDeployment) Close() error                      { return nil }

func TestRunnerPlansRecordsAndStopsPartial(t *testing.T) {
	open := func(context.Context, []string, time.Duration) (Locker, error) { return &scriptedLocker{}, nil }
	ra, rf := &ServerSpec{Name: "ra"}, &ServerSpec{Name: "rf"}
	contenders := []Contender{
		{Name: "a", Label: "A", Family: "fa", Colour: "#010203", Server: ra, Open: open,
			Settings: results.Settings{"wait": "x", "lease": "a contender cannot override the run's lease"}},
		{Name: "spin", Server: ra, Open: open, ContendedOnly: true},
		{Name: "floor", Server: rf, Open: open, Floor: true},
	}
	var runs []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	variant := func(name string, contended bool) Variant {
		return Variant{Name: name, Contended: contended, Estimate: time.Second,
			Run: func(ctx context.Context, env *Env) (results.Raw, error) {
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
	scen := []Scenario{
		{Name: "s1", Floors: true, Better: map[string]string{"m": HigherIsBetter},
			Settings: func(bool) results.Settings { return results.Settings{"k": "v"} },
			Variants: func(bool) []Variant { return []Variant{variant("broken", false), variant("shared", true)} }},
		{Name: "s2",
			Settings: func(bool) results.Settings { return nil },
			Variants: func(bool) []Variant { return []Variant{variant("never", false)} }},
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
	if res.Parameters.Contender["a"]["lease"] != "1s" || res.Parameters.Contender["a"]["wait"] != "x" {
		t.Fatalf("contender parameters %v", res.Parameters.Contender["a"])
	}
	if len(res.Summary) != 4 || res.Summary[0].Scenario != "s1" || res.Summary[0].Better != HigherIsBetter {
		t.Fatalf("summary %+v", res.Summary)
	}
	want0 := results.ContenderInfo{Name: "a", Label: "A", Family: "fa", Colour: "#010203"}
	if len(res.Contenders) != 3 || !reflect.DeepEqual(res.Contenders[0], want0) || !res.Contenders[1].ContendedOnly ||
		!res.Contenders[2].Floor || res.Contenders[2].Label != "floor" {
		t.Fatalf("contender info %+v", res.Contenders)
	}
	if err := CheckDeployment(fakeDeployment{}, contenders); err != nil {
		t.Fatal(err)
	}
	if err := CheckDeployment(fakeDeployment{}, []Contender{{Name: "x", Server: &ServerSpec{Name: "x", Replicas: 2}}}); !errors.Is(err, ErrNoServers) {
		t.Fatalf("CheckDeployment with a server missing = %v, want ErrNoServers", err)
	}
}

func TestParseProcAddr(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"0100007F:1F90", "127.0.0.1:8080", true},
		{"0270A8C0:1B9E", "192.168.112.2:7070", true},
		{"0000000000000000FFFF00000100007F:0050", "127.0.0.1:80", true},
		{"zz:1", "", false},
		{"0100007F", "", false},
	}
	for _, tt := range tests {
		got, ok := parseProcAddr(tt.in)
		if ok != tt.ok || (ok && got.String() != tt.want) {
			t.Errorf("parseProcAddr(%q) = %v, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestTimeWaitTo(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// Wait for the client's close, then close: the client
			// closed first and keeps the TIME_WAIT socket.
			_, _ = c.Read(make([]byte, 1))
			c.Close()
		}
	}()
	for range 5 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := TimeWaitTo([]string{l.Addr().String()})
		if err != nil {
			t.Fatal(err)
		}
		if n == 5 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("TimeWaitTo = %d, want the 5 closed client connections", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSpecs(t *testing.T) {
	a, b := &ServerSpec{Name: "a", Replicas: 3}, &ServerSpec{Name: "b"}
	specs, err := Specs([]Contender{{Name: "x", Server: a}, {Name: "y", Server: b}, {Name: "z", Server: a}})
	if err != nil || len(specs) != 2 || specs[0] != a || specs[1] != b {
		t.Fatalf("Specs = %v, %v; want a, b once each", specs, err)
	}
	if _, err := Specs([]Contender{{Name: "x", Server: a}, {Name: "y", Server: &ServerSpec{Name: "a"}}}); err == nil {
		t.Fatal("two different specs named a were accepted")
	}
	if _, err := Specs([]Contender{{Name: "x"}}); err == nil {
		t.Fatal("a contender without a spec was accepted")
	}
	if a.ServerName(1) != "a-2" || b.ServerName(0) != "b" || b.FlagStem() != "b" {
		t.Fatalf("names %q %q %q", a.ServerName(1), b.ServerName(0), b.FlagStem())
	}
}

// A variant that does not apply is recorded with its reason in each
// repetition's record, is not a failure, adds nothing to the summary and
// is told to Progress.
func TestRunnerRecordsSkips(t *testing.T) {
	open := func(context.Context, []string, time.Duration) (Locker, error) { return &scriptedLocker{}, nil }
	c := Contender{Name: "a", Server: &ServerSpec{Name: "ra"}, Open: open}
	s := Scenario{Name: "s", Settings: func(bool) results.Settings { return nil },
		Variants: func(bool) []Variant {
			return []Variant{{Name: "v", Run: func(context.Context, *Env) (results.Raw, error) {
				return results.Raw{Skipped: "no minority"}, nil
			}}}
		}}
	p := &skipProgress{}
	r := &Runner{Scenarios: []Scenario{s}, Contenders: []Contender{c}, Deployment: fakeDeployment{}, Repetitions: 2, Lease: time.Second, Progress: p}
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
	open := func(context.Context, []string, time.Duration) (Locker, error) { return &scriptedLocker{}, nil }
	ra, rf := &ServerSpec{Name: "ra"}, &ServerSpec{Name: "rf"}
	contenders := []Contender{
		{Name: "a", Server: ra, Open: open},
		{Name: "spin", Server: ra, Open: open, ContendedOnly: true},
		{Name: "floor", Server: rf, Open: open, Floor: true},
	}
	var calls [][]string
	v := Variant{Name: "w1", Estimate: time.Second,
		Interleaved: func(_ context.Context, envs []*Env) ([]results.Raw, []error) {
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
	scen := []Scenario{{Name: "latency", Floors: true, Settings: func(bool) results.Settings { return nil },
		Variants: func(bool) []Variant { return []Variant{v} }}}
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
	open := func(context.Context, []string, time.Duration) (Locker, error) { return &scriptedLocker{}, nil }
	contenders := []Contender{{Name: "a", Server: &ServerSpec{Name: "ra"}, Open: open}}
	var runs []string
	variant := func(name string, maxReps int) Variant {
		return Variant{Name: name, Estimate: time.Second, MaxRepetitions: maxReps,
			Run: func(ctx context.Context, env *Env) (results.Raw, error) {
				runs = append(runs, name)
				return results.Raw{}, nil
			}}
	}
	r := &Runner{Repetitions: 3, Contenders: contenders, Deployment: fakeDeployment{}, Lease: time.Second,
		Scenarios: []Scenario{{Name: "s",
			Settings: func(bool) results.Settings { return nil },
			Variants: func(bool) []Variant { return []Variant{variant("all", 0), variant("once", 1)} }}}}
	if err := r.Run(context.Background(), &results.Results{}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(runs, " "), "all all all once"; got != want {
		t.Fatalf("runs %q, want %q", got, want)
	}
}

// The ETA scales the steps left by actual/estimated of the measured steps;
// a contender skipped in a repetition costs nothing in the later ones and
// stays out of the scale.
func TestETA(t *testing.T) {
	ra := &ServerSpec{Name: "ra"}
	contenders := []Contender{{Name: "a", Server: ra}, {Name: "b", Server: ra}}
	v := Variant{Name: "v", Estimate: time.Second, Run: func(context.Context, *Env) (results.Raw, error) { return results.Raw{}, nil }}
	w := Variant{Name: "w", Estimate: time.Second, Interleaved: func(context.Context, []*Env) ([]results.Raw, []error) { return nil, nil }}
	s := Scenario{Name: "s", Variants: func(bool) []Variant { return []Variant{v, w} }}
	r := &Runner{Scenarios: []Scenario{s}, Contenders: contenders}
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

// A variant holding more claims than a contender's MaxClaims is skipped at
// once, so the ETA does not count it.
func TestETAClaimsBeyondMaxClaims(t *testing.T) {
	ra := &ServerSpec{Name: "ra"}
	contenders := []Contender{{Name: "a", Server: ra}, {Name: "pool", Server: ra, MaxClaims: 80}}
	run := func(context.Context, *Env) (results.Raw, error) { return results.Raw{}, nil }
	small := Variant{Name: "small", Estimate: time.Second, Claims: 80, Run: run}
	big := Variant{Name: "big", Estimate: 10 * time.Second, Claims: 1000, Run: run}
	s := Scenario{Name: "s", Variants: func(bool) []Variant { return []Variant{small, big} }}
	steps := (&Runner{Scenarios: []Scenario{s}, Contenders: contenders}).plan(1)
	m := etaModel{skips: map[string]bool{}}
	if got := m.remaining(steps); got != 12*time.Second {
		t.Fatalf("remaining %v, want 12s: small for both, big for a alone", got)
	}
}

// A warm-up ends between cycles: the acquire in flight when it ends is not
// cancelled (a cancelled one could leave its key held on the server).
func TestWarmupEndsBetweenCycles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &scriptedLocker{acquireIn: 30 * time.Millisecond}
		stop, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		recs := runWorkers(t.Context(), stop, l, Workload{Workers: 2, Key: func(int) string { return "k" }}, 0)
		for i, r := range recs {
			if r.Cycles != 1 || r.Failures != 0 {
				t.Errorf("worker %d: %d cycles, %d failures; want the one in flight completed", i, r.Cycles, r.Failures)
			}
		}
	})
}
