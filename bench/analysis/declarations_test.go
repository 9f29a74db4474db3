package analysis

import (
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/scenarios"
)

// declaredRun indexes hand-made raw records (test data, not
// measurements) under today's scenario declarations (declared).
func declaredRun(raw []results.Raw, infos ...results.ContenderInfo) *Run {
	return New(declared(raw, infos...))
}

// declared is a run of hand-made raw records under today's scenario
// declarations, as the CLI's fillDefaults gives them to a file written
// without them; every contender's lease is 2 s.
func declared(raw []results.Raw, infos ...results.ContenderInfo) *results.Results {
	var decls []results.ScenarioInfo
	cmd := holder.Command{}
	for _, s := range []bench.Scenario{
		scenarios.Latency(), scenarios.HandoverConfig{Holder: cmd}.Scenario(), scenarios.FairnessConfig{}.Scenario(),
		scenarios.SafetyConfig{Holder: cmd}.Scenario(), scenarios.FailoverConfig{}.Scenario(),
	} {
		decls = append(decls, s.Info(false))
	}
	r := &results.Results{Parameters: results.Parameters{Contender: map[string]results.Settings{}}, Contenders: infos, Raw: raw, Summary: results.Summarize(raw)}
	for _, i := range infos {
		r.Parameters.Contenders = append(r.Parameters.Contenders, i.Name)
		r.Parameters.Contender[i.Name] = results.Settings{"lease": "2s"}
	}
	r.FillDefaults(results.Defaults{Scenarios: decls})
	return r
}

// rec is one repetition of a contender in a scenario's variant per
// value of each metric: rec("failover", "etcd", "minority-down",
// m("unavailable_ms", "ms", 54), …) with two values makes two records.
func rec(scenario, c, v string, ms ...[]results.Metric) []results.Raw {
	var out []results.Raw
	for i := range ms[0] {
		x := results.Raw{Scenario: scenario, Contender: c, Variant: v, Repetition: i + 1}
		for _, per := range ms {
			x.Metrics = append(x.Metrics, per[i])
		}
		out = append(out, x)
	}
	return out
}

// ms is a metric's values, one per repetition.
func ms(name, unit string, vals ...float64) []results.Metric {
	out := make([]results.Metric, len(vals))
	for i, v := range vals {
		out[i] = results.Metric{Name: name, Unit: unit, Value: v}
	}
	return out
}

// useCase returns the use case whose title starts with prefix.
func useCase(prefix string) UseCase {
	for _, u := range UseCases {
		if len(u.Title) >= len(prefix) && u.Title[:len(prefix)] == prefix {
			return u
		}
	}
	panic("no use case " + prefix)
}
