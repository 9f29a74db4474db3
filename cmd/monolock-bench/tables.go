package main

import (
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/scenarios"
)

// scenarioTable lists every scenario in run order. A new scenario is one
// more row. holderCmd starts this binary's hidden holder subcommand, the
// separate OS process that holds the lock in the handover scenario. The
// contender table is bench/contenders.Table, shared with the tests.
func scenarioTable(holderCmd holder.Command) []bench.Scenario {
	return []bench.Scenario{
		scenarios.Latency(),
		scenarios.Throughput(),
		scenarios.HandoverConfig{Holder: holderCmd}.Scenario(),
		scenarios.FairnessConfig{}.Scenario(),
		scenarios.SafetyConfig{Holder: holderCmd}.Scenario(),
		scenarios.FailoverConfig{}.Scenario(),
		scenarios.Scale(),
	}
}
