package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/local"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/scenarios"
)

// tinyScenarios are the real scenarios with tiny counts: the smoke test
// exercises the pipeline, its figures mean nothing.
func tinyScenarios() []bench.Scenario {
	return []bench.Scenario{
		scenarios.LatencyConfig{Blocks: 2, Warmup: 50 * time.Millisecond, Iterations: 20, IterationsW8: 6, OpenLoop: scenarios.OpenLoopConfig{
			Fractions: []float64{0.5}, Rate: 100, Workers: 2, Calibration: 200 * time.Millisecond, Duration: 300 * time.Millisecond, Warmup: 20 * time.Millisecond,
		}}.Scenario(),
		scenarios.ThroughputConfig{
			Warmup: 50 * time.Millisecond, Duration: 500 * time.Millisecond,
			DistinctWorkers: []int{1, 4}, SharedWorkers: 4, SharedKeys: 2,
		}.Scenario(),
	}
}

// requireExecutables skips without the programs the contender table's
// servers need on PATH, unless CI is set.
func requireExecutables(t *testing.T) {
	t.Helper()
	specs, err := bench.Specs(contenderTable())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Executable == "" {
			continue
		}
		if _, err := exec.LookPath(s.Executable); err != nil {
			if os.Getenv("CI") == "" {
				t.Skip(err)
			}
			t.Fatal(err)
		}
	}
}

// TestSmoke runs the whole pipeline — servers, every contender, both
// scenarios, results.json, report, compare — on the local backend and, when
// a Docker engine answers, on the containers backend.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every contender on real servers and containers (minutes)")
	}
	for _, backend := range []string{"local", "containers"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "containers" {
				benchtest.RequireDocker(t)
			} else {
				requireExecutables(t)
			}
			out := t.TempDir()
			o := &runOptions{
				scenarios: tinyScenarios(), contenders: contenderTable(), backend: backend,
				quick: true, repetitions: 2, out: out, lease: 5 * time.Second,
			}
			var stdout, stderr bytes.Buffer
			if code := runSuite(context.Background(), o, &stdout, &stderr); code != exitOK {
				t.Fatalf("run = %d, stderr:\n%s", code, stderr.String())
			}
			r, err := results.Load(filepath.Join(out, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			if r.Partial || r.Environment.Backend != backend {
				t.Fatalf("partial=%v backend=%q", r.Partial, r.Environment.Backend)
			}
			if len(r.Environment.Servers) == 0 {
				t.Errorf("environment incomplete: %+v", r.Environment)
			}
			for _, s := range r.Environment.Servers {
				if strings.HasPrefix(s.Role, "redis") && s.Version == "" {
					t.Errorf("server %s has no version", s.Role)
				}
			}
			table := contenderTable()
			if len(r.Contenders) != len(table) {
				t.Errorf("contender info %+v, want one per contender", r.Contenders)
			}
			for i, info := range r.Contenders {
				if !reflect.DeepEqual(info, table[i].Info()) || info.Colour == "" || info.Family == "" {
					t.Errorf("contender info %+v, want %+v with a colour and a family", info, table[i].Info())
				}
			}
			// Every contender produced every figure of every variant it
			// takes part in, with no failures, in both repetitions.
			seen := map[string]bool{}
			for _, row := range r.Summary {
				seen[row.Scenario+"/"+row.Variant+"/"+row.Contender+"/"+row.Metric] = true
				// A repetition without a single completed cycle (a stall
				// of the noisy machine) still counts its zero throughput
				// but gives no percentiles.
				if whole := row.Metric == "cycles_per_sec" || row.Metric == "failures"; whole && row.N != 2 || row.N < 1 {
					t.Errorf("%+v: n=%d, want 2 repetitions", row, row.N)
				}
				if row.Metric == "failures" && row.Max != 0 {
					t.Errorf("%s/%s/%s: %v failures", row.Scenario, row.Variant, row.Contender, row.Max)
				}
				better := map[string]string{"cycles_per_sec": "higher", "cycle_p99": "lower", "workers": ""}
				if want, ok := better[row.Metric]; ok && row.Better != want {
					t.Errorf("%s: better %q, want %q", row.Metric, row.Better, want)
				}
			}
			for _, c := range contenderTable() {
				if len(c.Scenarios) > 0 {
					continue // a mode of a lock for other scenarios
				}
				// Server CPU per lock is left out of a record whose span
				// completed no cycle or whose servers' CPU could not be read
				// (engine stats on a loaded machine); the run as a whole must have
				// it (below).
				want := []string{"latency/w1/" + c.Name + "/cycle_p99", "latency/open-50pct/" + c.Name + "/acquire_p999", "latency/open-100/" + c.Name + "/achieved_per_sec", "throughput/shared-w4/" + c.Name + "/cycles_per_sec"}
				if c.ContendedOnly {
					want = want[3:]
				}
				for _, k := range want {
					// A variant the contender is capped from has no row
					// (the PgBouncer rows: latency and throughput).
					parts := strings.Split(k, "/")
					if !seen[k] && c.CapOf(parts[0], bench.Variant{Name: parts[1]}, true) == "" {
						t.Errorf("no summary row %s", k)
					}
				}
			}
			cpu := 0
			for k := range seen {
				if strings.HasSuffix(k, "/server_cpu_ms_per_1k") {
					cpu++
				}
			}
			if cpu == 0 {
				t.Error("no contender has a server_cpu_ms_per_1k figure")
			}
			if !strings.Contains(stdout.String(), "| variant | metric |") {
				t.Errorf("no table on stdout:\n%s", stdout.String())
			}

			// report re-renders from results.json alone; compare runs on
			// two result files.
			os.Remove(filepath.Join(out, "report.md"))
			os.Remove(filepath.Join(out, "report.html"))
			stdout.Reset()
			if code := dispatch(context.Background(), []string{"report", filepath.Join(out, "results.json")}, &stdout, &stderr); code != exitOK {
				t.Fatalf("report = %d: %s", code, stderr.String())
			}
			for _, f := range []string{"report.md", "report.html"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Fatal(err)
				}
			}
			stdout.Reset()
			p := filepath.Join(out, "results.json")
			if code := dispatch(context.Background(), []string{"compare", p, p}, &stdout, &stderr); code != exitOK {
				t.Fatalf("compare = %d: %s", code, stderr.String())
			}
			if !strings.Contains(stdout.String(), "| latency | w1 | monolock | acquire + release p99 | ") {
				t.Errorf("compare output lacks a latency row:\n%s", stdout.String())
			}
		})
	}
}

// TestInterrupt cancels a local run midway: the exit status is 130, the
// results written so far are marked partial, and no server is left
// running.
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers for seconds")
	}
	requireExecutables(t)
	out := t.TempDir()
	o := &runOptions{
		scenarios: []bench.Scenario{scenarios.ThroughputConfig{
			Warmup: 50 * time.Millisecond, Duration: 400 * time.Millisecond, DistinctWorkers: []int{1, 2, 3, 4, 5, 6, 7, 8},
		}.Scenario()},
		contenders: contenderTable()[:2], backend: "local", repetitions: 1, out: out, lease: 5 * time.Second,
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout bytes.Buffer
	var stderr lockedBuffer // read here while run writes it
	done := make(chan int)
	go func() { done <- runSuite(ctx, o, &stdout, &stderr) }()
	// Cancel once some repetitions finished.
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(stderr.String(), "[4/") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != exitInterrupted {
		t.Fatalf("run = %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
	}
	r, err := results.Load(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Partial || !strings.Contains(r.PartialReason, "interrupted") || len(r.Raw) == 0 {
		t.Fatalf("partial=%v reason=%q raw=%d, want partial results", r.Partial, r.PartialReason, len(r.Raw))
	}
	for _, s := range r.Environment.Servers {
		if c, err := net.DialTimeout("tcp", s.Address, time.Second); err == nil {
			c.Close()
			t.Errorf("server %s at %s still accepts connections after the run", s.Role, s.Address)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestParseRunFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown scenario", []string{"--scenarios", "latency,nope"}, `unknown scenario "nope"`},
		{"unknown contender", []string{"--contenders", "consul"}, `unknown contender "consul"`},
		{"bad backend", []string{"--backend", "cloud"}, "--backend"},
		{"negative repetitions", []string{"--repetitions", "-1"}, "repetitions"},
		{"tiny lease", []string{"--lease", "1us"}, "lease"},
		{"four redlock masters", []string{"--redlock-addrs", "a:1,b:1,c:1,d:1"}, "wants 5 comma-separated"},
		{"addresses without external", []string{"--backend", "local", "--redis-addr", "127.0.0.1:1"}, "external"},
		{"external without addresses", []string{"--backend", "external"}, "needs"},
		{"external contender without address", []string{"--redis-addr", "127.0.0.1:1", "--contenders", "monolock"}, "needs the address"},
		{"stray argument", []string{"latency"}, "unexpected"},
		{"negative chaos duration", []string{"--chaos-duration", "-1m"}, "chaos-duration"},
		{"bad chaos seed", []string{"--chaos-seed", "x"}, "chaos-seed"},
		{"ok quick", []string{"--quick", "--backend", "local"}, ""},
		{"ok external", []string{"--redis-addr", "127.0.0.1:1"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseRunFlags(tt.args, &bytes.Buffer{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parseRunFlags = %v, %v; want errUsage mentioning %q", o, err, tt.wantErr)
			}
		})
	}
	// The chaos flags reach the scenario: its settings record the seed.
	o, err := parseRunFlags([]string{"--scenarios", "chaos", "--chaos-seed", "42", "--chaos-duration", "5m", "--backend", "local"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if set := o.scenarios[0].Settings(false); !strings.HasPrefix(set["seed"], "42 ") || !strings.HasPrefix(set["duration"], "5m0s") {
		t.Errorf("chaos settings: seed %q, duration %q", set["seed"], set["duration"])
	}
	o, err = parseRunFlags([]string{"--redis-addr", "127.0.0.1:1"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.backend != "external" || len(o.contenders) != 6 || o.repetitions != defaultRepetitions {
		t.Fatalf("external with a Redis: backend %q, %d contenders (want redis, redisson, redisson-fair, redis-spin, redis-incr, redis-floor), %d repetitions",
			o.backend, len(o.contenders), o.repetitions)
	}
}

// --workload takes ready names and files; with no --scenarios only the
// workload scenario runs, with them both; a bad file is a usage error
// (exit status 2) that lists every problem as file:line:col.
func TestWorkloadFlag(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nclients: 0\nkeys: 10\nholt: 5ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(good, []byte("name: mine\nclients: 4\nkeys: 10\narrivals: {loop: closed}\nhold: 1s\nlease: 500ms\nduration: 2s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	variants := func(o *runOptions) []string {
		var vs []string
		for _, s := range o.scenarios {
			for _, v := range s.Variants(o.quick) {
				vs = append(vs, s.Name+"/"+v.Name)
			}
		}
		return vs
	}
	var stderr bytes.Buffer
	o, err := parseRunFlags([]string{"--workload", "job-queue," + good}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if got := variants(o); !reflect.DeepEqual(got, []string{"workload/job-queue", "workload/mine"}) {
		t.Errorf("--workload alone runs %v, want the two workloads only", got)
	}
	if !strings.Contains(stderr.String(), "mine.yaml:5:7: warning: hold:") {
		t.Errorf("the hold-over-lease warning is not on stderr: %q", stderr.String())
	}
	o, err = parseRunFlags([]string{"--workload", "cron", "--scenarios", "latency"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.scenarios) != 2 || o.scenarios[0].Name != "latency" || o.scenarios[1].Name != "workload" {
		t.Errorf("--workload with --scenarios latency runs %v, want latency and workload", names(o.scenarios, scenarioName))
	}
	o, err = parseRunFlags([]string{"--scenarios", "workload"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if got := variants(o); !reflect.DeepEqual(got, []string{"workload/cron", "workload/hot-counter", "workload/job-queue", "workload/leader-election"}) {
		t.Errorf("the workload scenario without --workload runs %v, want the ready workloads", got)
	}
	// --quick narrows the ready workloads to the quick pair, not a file of
	// the user's own, and nothing when --contenders names the contenders.
	skips := func(o *runOptions, variant, contender string) bool {
		t.Helper()
		c, err := pick(contenderTable(), contender, contenderName, "contender")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range o.scenarios {
			for _, v := range s.Variants(o.quick) {
				if s.Name == "workload" && v.Name == variant {
					return v.Skip(c[0]) != ""
				}
			}
		}
		t.Fatalf("no workload variant %s", variant)
		return false
	}
	for _, c := range []struct {
		args      []string
		variant   string
		contender string
		wantSkip  bool
		what      string
	}{
		{[]string{"--quick", "--workload", "cron," + good}, "cron", "etcd", true, "a ready workload in the quick suite keeps to the pair"},
		{[]string{"--quick", "--workload", "cron," + good}, "cron", "redis", false, "the pair runs the ready workloads"},
		{[]string{"--quick", "--workload", "cron," + good}, "mine", "etcd", false, "a file of the user's own runs on every contender"},
		{[]string{"--quick", "--scenarios", "workload"}, "leader-election", "postgres", true, "the quick suite's ready workloads keep to the pair"},
		{[]string{"--quick", "--contenders", "etcd,postgres", "--workload", "cron"}, "cron", "etcd", false, "--contenders names the contenders of a quick run"},
		{[]string{"--workload", "cron"}, "cron", "etcd", false, "the full suite runs every lock"},
	} {
		o, err := parseRunFlags(c.args, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if got := skips(o, c.variant, c.contender); got != c.wantSkip {
			t.Errorf("%v: %s skips %s: %v, want %v (%s)", c.args, c.variant, c.contender, got, c.wantSkip, c.what)
		}
	}

	for _, c := range []struct {
		list string
		want []string
	}{
		{bad, []string{"bad.yaml is invalid", "bad.yaml:2:10: ", "bad.yaml:4:1: unknown field \"holt\""}},
		{"no-such-workload", []string{`"no-such-workload" is neither a file nor a ready workload`}},
		{"cron,cron", []string{"both named \"cron\""}},
		{"cron,", []string{"an empty name"}},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(context.Background(), []string{"run", "--workload", c.list}, &stdout, &stderr)
		if code != exitUsage {
			t.Errorf("--workload %s: exit %d, want %d", c.list, code, exitUsage)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("--workload %s: stderr %q lacks %q", c.list, stderr.String(), w)
			}
		}
	}
}

func TestExternalUnreachable(t *testing.T) {
	free, err := local.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), []string{"run", "--redis-addr", free, "--out", t.TempDir()}, &stdout, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), "unreachable") {
		t.Fatalf("run against a dead address = %d, stderr %q; want exit 1 saying unreachable", code, stderr.String())
	}
}
