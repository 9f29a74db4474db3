package workload

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReady(t *testing.T) {
	want := []string{"cron", "hot-counter", "job-queue", "leader-election"}
	if got := Ready(); !slices.Equal(got, want) {
		t.Fatalf("Ready() = %v, want %v", got, want)
	}
	// What each ready file promises: its shape, and the warnings it
	// gives (cron's holds outlast its lease on purpose).
	shapes := map[string]struct {
		loop     Loop
		keys     int
		dist     KeyDist
		warnings []string
	}{
		"cron":            {Open, 160, UniformKeys, []string{"ready/cron.yaml:39:3: warning: hold: about 67% of the holds (uniform 1s–4s) outlast the lease (2s)"}},
		"hot-counter":     {Closed, 1, UniformKeys, nil},
		"job-queue":       {Open, 5000, Zipfian, nil},
		"leader-election": {Closed, 1, UniformKeys, nil},
	}
	for _, name := range want {
		t.Run(name, func(t *testing.T) {
			w, ws, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			s := shapes[name]
			if w.Name != name || w.Source != "ready/"+name+".yaml" || !w.Ready || w.Arrivals.Loop != s.loop || w.Keys.Count != s.keys || w.Keys.Dist != s.dist {
				t.Errorf("%s: name %q source %q loop %v keys %d %v", name, w.Name, w.Source, w.Arrivals.Loop, w.Keys.Count, w.Keys.Dist)
			}
			if len(ws) != len(s.warnings) {
				t.Errorf("warnings %v, want %v", ws, s.warnings)
			}
			for i := range min(len(ws), len(s.warnings)) {
				if !strings.HasPrefix(ws[i].String(), s.warnings[i]) {
					t.Errorf("warning %q, want %q...", ws[i], s.warnings[i])
				}
			}
			if w.Lease%time.Second != 0 {
				t.Errorf("lease %v: ready files use whole seconds (etcd's TTL)", w.Lease)
			}
			if len(w.Thresholds) == 0 {
				t.Error("no thresholds: every ready file shows SLOs")
			}
			// The budget: the workload scenario runs each workload once
			// per contender (its cap), on about 10 contenders in the full
			// suite and 2 in the quick one; TestPlanBudget
			// (cmd/monolock-bench) checks the suite's whole plan. Here
			// each ready file keeps to its share per contender, with the
			// grace for requests still waiting (at most half the window).
			warmup, duration := w.Window(false)
			if per := warmup + duration + duration/2; per > 9*time.Second {
				t.Errorf("%v per contender in the full suite, above its share", per)
			}
			qw, qd := w.Window(true)
			if per := qw + qd + qd/2; per > 3500*time.Millisecond || qd <= 0 {
				t.Errorf("quick window %v after %v: %v per contender, above its share", qd, qw, per)
			}
		})
	}
}

// TestReadyFilesExplainEveryField: the ready files are the format's
// documentation: every field they set has a comment above it or on its
// line somewhere in the file, and job-queue.yaml, the annotated example,
// names every field of the format.
func TestReadyFilesExplainEveryField(t *testing.T) {
	data, err := readyFiles.ReadFile("ready/job-queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, f := range []string{
		"name", "description", "clients", "count", "processes", "keys", "distribution", "theta", "hot_keys", "hot_traffic",
		"arrivals", "loop", "rate", "spacing", "think", "hold", "fixed", "uniform", "exponential", "min", "max", "p50", "p99",
		"lease", "duration", "warmup", "quick", "seed", "thresholds",
	} {
		if !strings.Contains(text, "# "+f) && !strings.Contains(text, " "+f+":") && !strings.Contains(text, "{"+f+":") {
			t.Errorf("job-queue.yaml does not explain %s", f)
		}
	}
	for _, m := range thresholdMetrics {
		if m.Name != "slo_pass" && !strings.Contains(text, m.Name) {
			t.Errorf("job-queue.yaml does not name the metric %s", m.Name)
		}
	}
	for _, name := range Ready() {
		data, _ := readyFiles.ReadFile("ready/" + name + ".yaml")
		lines := strings.Split(string(data), "\n")
		if !strings.HasPrefix(lines[0], "# "+name+":") {
			t.Errorf("%s.yaml does not open with a comment naming it", name)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yml")
	if err := os.WriteFile(path, []byte(doc(nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	w, _, err := Load(path)
	if err != nil || w.Name != "t" || w.Source != path || w.Ready {
		t.Errorf("Load(%q): %v, %v", path, w.Name, err)
	}

	// A bare name that is no ready workload but a file in the working
	// directory is read as a path.
	t.Chdir(dir)
	if err := os.WriteFile("bare", []byte(doc(nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	if w, _, err := Load("bare"); err != nil || w.Source != "bare" {
		t.Errorf("Load(bare): %v %v", w.Source, err)
	}

	_, _, err = Load("job-quuee")
	if err == nil || err.Error() != `workload: "job-quuee" is neither a file nor a ready workload (ready: cron, hot-counter, job-queue, leader-election)` {
		t.Errorf("unknown name: %v", err)
	}
	_, _, err = Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "workload: ") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var perr *Error
	if _, _, err := Load(bad); !errors.As(err, &perr) || perr.File != bad || len(perr.Problems) != 6 {
		t.Errorf("invalid file: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	w, _, err := Load("job-queue")
	if err != nil {
		t.Fatal(err)
	}
	got := w.Describe()
	for _, want := range []string{
		"job-queue: About 300 jobs a second over 5,000 job keys",
		"Requests arrive at random (Poisson) at 300/s on average, whatever the lock does; 40 clients serve them",
		"A request's latency counts from its arrival, so a backlog shows.",
		"one of 5,000 keys, zipfian with theta 0.7: the most used key gets 2.5% of the requests, the 10 most used 9.9%.",
		"Holds: p1 20ms, p50 50ms, p99 200ms (mean 62ms); lease 10s.",
		"About 3.5% of the requests find their key held by another client and wait",
		"Measured for 4s after a 1s warm-up (quick suite: 1s after 250ms); seed 1",
		"- acquire p99 from the intended start below 250ms (acquire_p99 < 250ms)",
		"- achieved rate at least 99% of the offered rate (achieved_per_sec >= 99%)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe lacks %q:\n%s", want, got)
		}
	}
	w, _, err = Load("cron")
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Describe(); !strings.Contains(got, "About 67% of the holds outlast the lease: heartbeats or a watchdog must keep the lock.") {
		t.Errorf("cron: %s", got)
	}
	w, _, err = Load("leader-election")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"12 clients, each with its own connections, loop: acquire the key, hold it, release it, then think (uniform 40ms–120ms).",
		"Every request is for the same key.",
	} {
		if got := w.Describe(); !strings.Contains(got, want) {
			t.Errorf("leader-election lacks %q:\n%s", want, got)
		}
	}
}

func TestSettings(t *testing.T) {
	w, _, err := Load("job-queue")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"workload": "job-queue", "source": "ready/job-queue.yaml", "clients": "40", "processes": "1",
		"keys": "5,000 keys, zipfian (theta 0.7)", "arrivals": "open loop, Poisson arrivals at 300/s",
		"hold": "p1 20ms, p50 50ms, p99 200ms", "lease": "10s", "warmup": "250ms", "duration": "1s", "seed": "1",
		"thresholds": "acquire_p50 < 5ms; acquire_p99 < 250ms; failures < 0.1%; achieved_per_sec >= 99%",
	}
	got := w.Settings(true)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("settings %v", got)
	}
}
