package report

import (
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/scenarios"
)

// declarations returns today's scenario declarations, as the CLI's
// fillDefaults gives them to a file written without them (the tests'
// synthetic results are such files).
func declarations(quick bool) []results.ScenarioInfo {
	var out []results.ScenarioInfo
	cmd := holder.Command{}
	for _, s := range []bench.Scenario{
		scenarios.Latency(), scenarios.Throughput(), scenarios.HandoverConfig{Holder: cmd}.Scenario(),
		scenarios.FairnessConfig{}.Scenario(), scenarios.SafetyConfig{Holder: cmd}.Scenario(),
		scenarios.FailoverConfig{}.Scenario(), scenarios.Scale(), scenarios.Workloads(), scenarios.ChaosConfig{Holder: cmd}.Scenario(),
	} {
		out = append(out, s.Info(quick))
	}
	return out
}

// declared completes r with today's declarations and returns it.
func declared(r *results.Results) *results.Results {
	r.FillDefaults(results.Defaults{Scenarios: declarations(r.Parameters.Quick)})
	return r
}
