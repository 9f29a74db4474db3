package scenarios

import (
	"context"
	"testing"
	"time"
)

// TestFairnessSmoke runs a short fairness repetition per contender against real
// servers (child processes) and checks the record's shape and the
// mechanisms the figures must tell apart: a monolock grant costs one
// ACQUIRE, a polling Redis waiter asks again and again.
func TestFairnessSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	contenders, d := locks(t)
	const clients = 4
	s := FairnessConfig{Clients: clients, Warmup: 200 * time.Millisecond, Duration: 1500 * time.Millisecond}.Scenario()
	res := runScenario(ctx, t, s, contenders, d, 2*time.Second)
	if len(res.Raw) != len(contenders) {
		t.Fatalf("%d raw records, want %d", len(res.Raw), len(contenders))
	}
	for _, raw := range res.Raw {
		m := map[string]float64{}
		for _, x := range raw.Metrics {
			m[x.Name] = x.Value
		}
		t.Logf("%s: %v counts %v", raw.Contender, m, raw.Counts)
		for _, name := range []string{"jain_index", "fifo_inversions_per_1k", "wait_p50", "wait_p99", "wait_max",
			"utilisation", "server_ops_per_sec", "grants", "attempts_per_grant", "server_cpu_ms_per_sec"} {
			if _, ok := m[name]; !ok {
				t.Errorf("%s: metric %s missing", raw.Contender, name)
			}
		}
		if raw.Variant != "n4" || len(raw.Clients) != clients {
			t.Errorf("%s: variant %q with %d clients", raw.Contender, raw.Variant, len(raw.Clients))
		}
		var sum int64
		for _, c := range raw.Clients {
			sum += c.Counts["grants"]
		}
		if sum != int64(m["grants"]) || sum == 0 {
			t.Errorf("%s: clients' grants sum to %d, grants %v", raw.Contender, sum, m["grants"])
		}
		if j := m["jain_index"]; j < 1.0/clients || j > 1 {
			t.Errorf("%s: Jain index %v outside [1/n, 1]", raw.Contender, j)
		}
		if u := m["utilisation"]; u <= 0 || u > 1 {
			t.Errorf("%s: utilisation %v outside (0, 1]", raw.Contender, u)
		}
		switch a := m["attempts_per_grant"]; raw.Contender {
		case "monolock":
			if a > 1.2 {
				t.Errorf("monolock: %v ACQUIREs per grant, want about 1 (queued, never re-asks)", a)
			}
		case "redis", "redlock":
			if a <= 1.1 {
				t.Errorf("%s: %v attempts per grant, want more than one (waiters poll)", raw.Contender, a)
			}
		}
	}
}
