package main

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/scenarios"
)

// TestFailoverContainers kills and restarts a real monolock server and a
// real Redis in containers through `run --scenarios failover` (restart and
// graceful-restart, tiny durations): both grant again after the restart,
// monolock's tokens after it exceed those before, and the cluster variants
// are skipped with their reason. The local backend is covered by
// bench/scenarios. The windows are generous: a grant before the kill and
// one after the restart must fall in them on a loaded 2-core machine,
// where a container restart and the clients' reconnects (go-redis dials a
// refused server 5 times, 100ms apart) take seconds.
func TestFailoverContainers(t *testing.T) {
	benchtest.RequireDocker(t)
	var cs []bench.Contender
	for _, c := range contenderTable() {
		if c.Name == "monolock" || c.Name == "redis" {
			cs = append(cs, c)
		}
	}
	out := t.TempDir()
	o := &runOptions{
		scenarios:  []bench.Scenario{scenarios.FailoverConfig{Before: 2 * time.Second, After: 5 * time.Second}.Scenario()},
		contenders: cs, backend: "containers", quick: true, repetitions: 1, out: out, lease: 2 * time.Second,
	}
	var stdout, stderr bytes.Buffer
	if code := runSuite(context.Background(), o, &stdout, &stderr); code != exitOK {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr.String())
	}
	r, err := results.Load(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, x := range r.Summary {
		got[x.Variant+"/"+x.Contender+"/"+x.Metric] = x.Median
	}
	for _, v := range []string{"restart", "graceful-restart"} {
		for _, c := range cs {
			if _, ok := got[v+"/"+c.Name+"/recovery_ms"]; !ok {
				t.Errorf("%s/%s: no grant after the restart", v, c.Name)
			}
		}
		if got[v+"/monolock/tokens_monotonic"] != 1 || got[v+"/monolock/token_gap"] <= 0 {
			t.Errorf("%s/monolock: tokens_monotonic %v, gap %v", v, got[v+"/monolock/tokens_monotonic"], got[v+"/monolock/token_gap"])
		}
	}
	if !slices.ContainsFunc(r.Raw, func(x results.Raw) bool {
		return x.Variant == "minority-down" && x.Contender == "redis" && x.Skipped == "single server: no minority to lose"
	}) {
		t.Errorf("no record of minority-down/redis skipped in %+v", r.Raw)
	}
}
