package scenarios

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/output/report"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/workload"
)

// workloadChildEnv marks the test binary re-executed as a workload-client
// child.
const workloadChildEnv = "MONOLOCK_BENCH_WORKLOAD_TEST_CLIENT"

func testWorkload(t *testing.T, text string) WorkloadFile {
	t.Helper()
	w, ws, err := workload.Parse(t.Name()+".yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return WorkloadFile{w, ws}
}

// TestWorkloadScenario runs three small workloads on monolock and Redis
// (local servers): an open loop beyond what its clients can serve, a
// closed loop on one key with its clients in two child processes, and a
// job queue. Every measured request is accounted for, the physics holds
// (achieved ≤ offered, latency from the intended start ≥ from the call),
// the verdicts are recorded, and the report has the section.
func TestWorkloadScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs workloads on real servers (about a minute)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cs, d := locks(t)
	cs = keep(cs, named("monolock", "redis"))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(workloadChildEnv, "1") // for the children only: this process has passed TestMain
	files := []WorkloadFile{
		// 2 clients holding 40ms serve at most 50/s: 150/s cannot be kept.
		testWorkload(t, `{name: overload, clients: 2, keys: 100, arrivals: {loop: open, rate: 150/s},
			hold: 40ms, lease: 2s, duration: 1s, warmup: 200ms, quick: {duration: 1s, warmup: 200ms},
			thresholds: ["achieved_per_sec >= 99%", "failures == 0", "server_cpu_ms_per_1k < 1000"]}`),
		testWorkload(t, `{name: leader, clients: {count: 4, processes: 2}, keys: 1,
			arrivals: {loop: closed, think: 10ms}, hold: 20ms, lease: 2s, duration: 1s, warmup: 200ms,
			quick: {duration: 1s, warmup: 200ms}, thresholds: [wait_p99 < 10s, failures == 0]}`),
		testWorkload(t, `{name: jobs, clients: 8, keys: {count: 200, distribution: zipfian, theta: 0.8},
			arrivals: {loop: open, rate: 200/s}, hold: {p50: 2ms, p99: 20ms}, lease: 2s, duration: 1s, warmup: 200ms,
			quick: {duration: 1s, warmup: 200ms}, thresholds: [acquire_p99 < 10s]}`),
	}
	s := WorkloadConfig{Workloads: files, Client: load.Command{Path: exe}}.Scenario()
	res := runScenario(ctx, t, s, cs, d, 2*time.Second)

	byVariant := map[string][]results.Raw{}
	for _, raw := range res.Raw {
		if raw.Skipped != "" {
			t.Fatalf("%s/%s skipped: %s", raw.Variant, raw.Contender, raw.Skipped)
		}
		byVariant[raw.Variant] = append(byVariant[raw.Variant], raw)
		metric := func(name string) (float64, bool) {
			for _, m := range raw.Metrics {
				if m.Name == name {
					return m.Value, true
				}
			}
			return 0, false
		}
		c := raw.Counts
		if c["requests"] == 0 || c["granted"]+c["failed"]+c["censored"]+c["unstarted"] != c["requests"] {
			t.Errorf("%s/%s: counts %v: not every request accounted for", raw.Variant, raw.Contender, c)
		}
		off, _ := metric("offered_per_sec")
		ach, _ := metric("achieved_per_sec")
		// A window grants at most its requests and the backlog it
		// inherited.
		if c["window_grants"] > c["requests"]+c["backlog_at_start"] {
			t.Errorf("%s/%s: counts %v: more grants than requests and backlog", raw.Variant, raw.Contender, c)
		}
		hist := func(name string) int64 {
			for _, h := range raw.Histograms {
				if h.Name == name {
					dec, err := h.Decode()
					if err != nil {
						t.Fatal(err)
					}
					return dec.ValueAtQuantile(99)
				}
			}
			t.Fatalf("%s/%s has no histogram %s", raw.Variant, raw.Contender, name)
			return 0
		}
		if hist("acquire_from_intended") < hist("acquire_from_call") {
			t.Errorf("%s/%s: p99 from the intended start below the one from the call", raw.Variant, raw.Contender)
		}
		if len(raw.Verdicts) == 0 {
			t.Errorf("%s/%s: no verdicts", raw.Variant, raw.Contender)
		}
		pass, ok := metric("slo_pass")
		all := 1.0
		for _, v := range raw.Verdicts {
			if !v.Known || !v.Pass {
				all = 0
			}
		}
		if !ok || pass != all {
			t.Errorf("%s/%s: slo_pass %v (%v), want %v from the verdicts %+v", raw.Variant, raw.Contender, pass, ok, all, raw.Verdicts)
		}
		switch raw.Variant {
		case "overload":
			if ach > 0.8*off {
				t.Errorf("overload/%s: achieved %.0f/s of %.0f/s offered: two clients holding 40ms cannot serve it", raw.Contender, ach, off)
			}
			if len(raw.Warnings) == 0 || !strings.Contains(strings.Join(raw.Warnings, " "), "closed loop") {
				t.Errorf("overload/%s: warnings %q, want the rate above the closed-loop maximum", raw.Contender, raw.Warnings)
			}
			// The local backend reads the servers' CPU.
			if raw.Verdicts[0].Pass || !raw.Verdicts[1].Pass || !raw.Verdicts[2].Known {
				t.Errorf("overload/%s: verdicts %+v, want achieved failing, failures passing, server CPU known", raw.Contender, raw.Verdicts)
			}
		case "leader":
			if c["processes"] != 2 {
				t.Errorf("leader/%s: %d processes", raw.Contender, c["processes"])
			}
			if _, ok := metric("wait_p99"); !ok {
				t.Errorf("leader/%s: no wait on the one key", raw.Contender)
			}
			if _, ok := metric("handover_p50"); !ok {
				t.Errorf("leader/%s: no handover on the one key", raw.Contender)
			}
		}
	}
	if len(byVariant) != 3 {
		t.Fatalf("variants %v", byVariant)
	}
	rep, err := report.Render(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Workload overload", "SLOs of overload", `achieved\_per\_sec &gt;= 99%`, "Ranking for jobs"} {
		if !strings.Contains(string(rep.Markdown)+string(rep.Details), want) {
			t.Errorf("neither report.md nor details.md has %q", want)
		}
	}
	if rk := analysis.New(res).RankWorkload(Workloads().Name, "jobs"); len(rk.Ranks) != 2 || rk.Ranks[0].Place != 1 {
		t.Errorf("ranking of jobs: %+v", rk)
	}
}

// A contender that cannot hold the workload's clients is skipped with
// the reason; a quick run keeps the ready workloads to its pair.
func TestWorkloadSkips(t *testing.T) {
	w := testWorkload(t, `{name: w, clients: 5, keys: 1, arrivals: {loop: closed}, hold: 1ms, lease: 1s, duration: 1s}`)
	w.Ready = true // as if shipped with the bench
	s := WorkloadConfig{Workloads: []WorkloadFile{w}, QuickContenders: []string{"a"}}.Scenario()
	contender := func(name string, most int) bench.Contender {
		return bench.Contender{Name: name, MaxSessions: most, MaxSessionsReason: "a small pool"}
	}
	for _, c := range []struct {
		quick bool
		c     bench.Contender
		want  string
	}{
		{true, contender("b", 0), "quick suite"},
		{false, contender("b", 4), "5 clients exceed the 4 sessions b can have at once: a small pool"},
		{true, contender("a", 0), ""},
		{false, contender("b", 5), ""},
	} {
		if got := s.Variants(c.quick)[0].Skip(c.c); got == "" && c.want != "" || !strings.Contains(got, c.want) || c.want == "" && got != "" {
			t.Errorf("%+v: Skip = %q, want %q", c, got, c.want)
		}
	}
	w.Ready = false // a user's own file: every contender, quick or not
	own := WorkloadConfig{Workloads: []WorkloadFile{w}, QuickContenders: []string{"a"}}.Scenario()
	if got := own.Variants(true)[0].Skip(contender("b", 0)); got != "" {
		t.Errorf("a user's own workload in a quick run skips b: %q", got)
	}
	v := s.Variants(false)[0]
	if v.Name != "w" || !v.Contended || v.Sessions != 5 || v.MaxRepetitions != DefaultWorkloadRepetitions || v.Estimate <= time.Second {
		t.Errorf("variant %+v", v)
	}
	set := s.Settings(false)
	if !strings.Contains(set["w.description"], "5 clients") || set["w.file"] != w.Text || set["w.clients"] != "5" {
		t.Errorf("settings %v: want the workload's description, file and settings", set)
	}
}

// A calibration window that spans fewer than a few mean holds is not run:
// clients that started at once would not have spread out, and the
// warning would be wrong.
func TestCalibrationNeedsHolds(t *testing.T) {
	w := testWorkload(t, `{name: w, clients: 24, keys: 32, arrivals: {loop: open, rate: 4/s}, hold: {uniform: {min: 1s, max: 4s}}, lease: 2s, duration: 5s}`)
	r := &workloadRun{w: w.Workload, env: &bench.Env{Contender: bench.Contender{Name: "c"}}}
	got, err := r.calibrate(&calibrations{max: map[string]float64{}}, false, func() (*load.Log, error) {
		t.Fatal("calibrated over fewer than 4 holds")
		return nil, nil
	})
	if err != nil || got != 0 || len(r.notes) != 1 || !strings.Contains(r.notes[0], "24 clients complete at most 9.6/s") {
		t.Errorf("calibrate = %v, %v, notes %q", got, err, r.notes)
	}
}

// TestFileLimitsAtRunTime: before a repetition, the workload's clients are
// checked against the open-file limits the processes report: the bench's
// (its clients per process, after raising its soft limit) and a real local
// monolock server's (all the clients). Keys do not count: a client holds
// one at a time.
func TestFileLimitsAtRunTime(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real server")
	}
	ctx := context.Background()
	ct := monolock.Contender()
	servers := benchtest.Start(t, ct.Server).Servers(ct.Server.Name)
	lr, ok := servers[0].(bench.LimitReader)
	if !ok {
		t.Fatal("a local server reads its open-file limits")
	}
	server, err := lr.FileLimits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	self, err := host.RaiseFileLimit()
	if err != nil {
		t.Fatal(err)
	}
	env := &bench.Env{Contender: ct, Servers: servers}
	warnings := func(clients, processes, keys int) string {
		t.Helper()
		if clients > workload.MaxClients {
			t.Skipf("the limits (bench %d, server %d) are beyond the most clients a workload may have", self.Soft, server.Soft)
		}
		w := testWorkload(t, fmt.Sprintf(`{name: w, clients: {count: %d, processes: %d}, keys: %d, arrivals: {loop: closed}, hold: 1ms, lease: 2s, duration: 1s}`, clients, processes, keys))
		r := &workloadRun{w: w.Workload, env: env}
		var out []string
		for _, wn := range r.fileLimits(ctx) {
			out = append(out, wn.String())
		}
		return strings.Join(out, "\n")
	}
	most := func(l bench.FileLimits) int { return int(l.Soft) - workload.OpenFilesReserve }
	inBench, inServer := "claims at once in the bench need", "claims at once in the "+servers[0].Name()+" server need"

	fits := min(most(self), most(server))
	if got := warnings(fits, 1, 1000); got != "" {
		t.Errorf("%d clients on 1,000 keys, within both limits (bench %d, server %d): %s", fits, self.Soft, server.Soft, got)
	}
	// Beyond the server's limit, spread so that each bench process fits.
	over := most(server) + 1
	if got := warnings(over, 4, 1); !strings.Contains(got, inServer) || strings.Contains(got, inBench) || over/4 > most(self) {
		t.Errorf("%d clients over 4 processes (bench %d, server %d): %q, want the server's warning only", over, self.Soft, server.Soft, got)
	}
	// Beyond the bench's own limit in one process.
	over = most(self) + 1
	if got := warnings(over, 1, 1); !strings.Contains(got, inBench) {
		t.Errorf("%d clients in one process (bench %d): %q, want the bench's warning", over, self.Soft, got)
	}
}
