package scenarios

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/local"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/run"
)

// locks returns the base locks (baseLocks) and their servers as local
// child processes, stopped at the end of the test.
func locks(t *testing.T) ([]bench.Contender, *local.Deployment) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a scenario on every contender's servers: not under -short (make test runs it)")
	}
	cs := baseLocks()
	specs, err := bench.Specs(cs)
	if err != nil {
		t.Fatal(err)
	}
	return cs, benchtest.Start(t, specs...)
}

// keep returns the contenders of cs that keep says to keep.
func keep(cs []bench.Contender, keep func(bench.Contender) bool) []bench.Contender {
	var out []bench.Contender
	for _, c := range cs {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// named keeps the contenders of those names.
func named(names ...string) func(bench.Contender) bool {
	return func(c bench.Contender) bool { return slices.Contains(names, c.Name) }
}

// dialable keeps the contenders that take a dialer (Dials): the ones
// the scale scenario can spread over several addresses.
func dialable(c bench.Contender) bool { return c.Dials }

// runScenario runs s once for contenders on d and returns the validated
// results.
func runScenario(ctx context.Context, t *testing.T, s bench.Scenario, cs []bench.Contender, d bench.Deployment, lease time.Duration) *results.Results {
	t.Helper()
	r := run.Runner{Scenarios: []bench.Scenario{s}, Contenders: cs, Deployment: d, Lease: lease}
	res := &results.Results{SchemaVersion: results.SchemaVersion, RunID: "smoke", StartedAt: time.Now()}
	d.Describe(&res.Environment)
	if err := r.Run(ctx, res); err != nil {
		t.Fatal(err)
	}
	if err := res.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, raw := range res.Raw {
		if err := results.Declared(res.Scenarios, raw); err != nil {
			t.Error(err)
		}
	}
	return res
}
