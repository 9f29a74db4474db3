package scenarios

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/redisson"
	"github.com/monolock/monolock-bench/redisbench/redissonfair"
)

// TestQueueNoPollRule runs a queue on real servers and judges Redisson's
// "does not poll" rule on every lock's figures: the polling redis waiters
// fail it, the waiters of both Redisson locks (each on a subscription
// connection of its own) and monolock's queued ones hold it. The Redisson
// locks' window spans the lease, so it holds with each waiter's retry at
// the remaining TTL inside: about one try per waiter, not zero.
func TestQueueNoPollRule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the scale queue on real servers: not under -short (make test runs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := []bench.Contender{monolock.Contender(), redisbench.RedisContender(), redisson.Contender(), redissonfair.Contender()}
	specs, err := bench.Specs(cs)
	if err != nil {
		t.Fatal(err)
	}
	d := benchtest.Start(t, specs...)
	const depth = 30
	const lease = 1500 * time.Millisecond
	cfg := ScaleConfig{
		Queue: []int{depth}, LongLease: lease,
		MinWindow: 500 * time.Millisecond, Promotions: 3, Concurrency: 8,
	}
	if w := cfg.withDefaults(false).queueWindow(redisson.Contender()); w != lease {
		t.Fatalf("a Redisson lock's queue window is %v, want the lease %v", w, lease)
	}
	const variant = "queue-30"
	s := cfg.Scenario()
	variants := s.Variants
	s.Variants = func(quick bool) []bench.Variant {
		return slices.DeleteFunc(variants(quick), func(v bench.Variant) bool { return v.Name != variant })
	}
	res := runScenario(ctx, t, s, cs, d, lease)
	want := map[string]analysis.ClaimVerdict{"redis": analysis.ClaimFails, redisson.Name: analysis.ClaimHolds, redissonfair.Name: analysis.ClaimHolds, "monolock": analysis.ClaimHolds}
	res.Claims = nil
	for name := range want {
		rule := redisson.NoPoll(name, name)
		rule.Variant = variant
		res.Claims = append(res.Claims, rule)
	}
	tries := map[string]float64{}
	for _, raw := range res.Raw {
		if raw.Skipped != "" {
			t.Fatalf("%s/%s skipped: %s", raw.Contender, raw.Variant, raw.Skipped)
		}
		m := metricsOf(raw)
		tries[raw.Contender] = m["waiter_tries_per_lease"]
		t.Logf("%s: %.2f tries per waiter per lease (%d in %.2fs), %.1f commands/s of the waiting", raw.Contender, m["waiter_tries_per_lease"], raw.Counts["window_tries"], raw.Seconds, m["waiting_ops_per_sec"])
	}
	for _, c := range analysis.New(res).Claims() {
		name := c.ID[:len(c.ID)-len("-no-poll")]
		if c.Verdict != want[name] {
			t.Errorf("%s: %s, want %s (%s)", c.ID, c.Verdict, want[name], c.Evidence)
		}
	}
	// The window shows the retry: every Redisson waiter tried in it.
	for _, name := range []string{redisson.Name, redissonfair.Name} {
		if tries[name] < 0.5 {
			t.Errorf("%s: %.2f tries per waiter per lease: the window missed the retries at the remaining TTL", name, tries[name])
		}
	}
}
