package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestScaleContainers runs the scale scenario's idle and queue variants at
// small C on the containers backend for the single-server contenders: 40
// sessions at most 15 per address pair reach the server container at
// three addresses (its own and two on extra networks), and the servers'
// memory comes from their cgroups.
func TestScaleContainers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	benchtest.RequireDocker(t)
	var cs []bench.Contender
	for _, c := range baseLocks() {
		if c.Server.Count() == 1 && dialable(c) {
			cs = append(cs, c)
		}
	}
	specs, err := bench.Specs(cs)
	if err != nil {
		t.Fatal(err)
	}
	d, err := containers.Start(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s := ScaleConfig{
		Idle: []int{40}, LongLease: 2 * time.Second, Queue: []int{35}, Churn: []int{},
		MinWindow: 500 * time.Millisecond, Promotions: 3, ConnsPerPair: 15, Concurrency: 8,
	}.Scenario()
	res := runScenario(ctx, t, s, cs, d, 2*time.Second)
	if len(res.Raw) != 2*len(cs) {
		t.Fatalf("%d records, want %d", len(res.Raw), 2*len(cs))
	}
	for _, raw := range res.Raw {
		m := metricsOf(raw)
		t.Logf("%s/%s: %v counts %v errors %v skipped %q", raw.Contender, raw.Variant, m, raw.Counts, raw.Errors, raw.Skipped)
		if raw.Skipped != "" {
			t.Errorf("%s/%s skipped: %s", raw.Contender, raw.Variant, raw.Skipped)
			continue
		}
		if raw.Counts["destination_addresses"] != 3 {
			t.Errorf("%s/%s: %d destination addresses, want 3", raw.Contender, raw.Variant, raw.Counts["destination_addresses"])
		}
		if _, ok := m["server_bytes_per_session"]; !ok {
			t.Errorf("%s/%s: no server memory from its cgroup", raw.Contender, raw.Variant)
		}
		if raw.Variant == "idle-40" && m["sessions_reached"] != 40 {
			t.Errorf("%s: %v sessions reached, want 40", raw.Contender, m["sessions_reached"])
		}
	}
}
