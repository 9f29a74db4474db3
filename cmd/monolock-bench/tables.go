package main

import (
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/etcd"
	"github.com/monolock/monolock-bench/bench/contenders/floors"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/contenders/postgres"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/scenarios"
	"github.com/monolock/monolock-bench/redisbench"
)

// The two tables of the suite. Nothing but this command imports the
// scenarios and the contenders: tests take the rows they need from the
// packages themselves.

// quickWorkloadContenders are the pair the quick suite runs the workloads
// on; the full suite runs every lock.
var quickWorkloadContenders = []string{"monolock", "redis"}

// scenarioTable lists every scenario in run order. A new scenario is one
// more row. holderCmd starts this binary's hidden holder subcommand, the
// separate OS process that holds the lock in the handover scenario;
// clientCmd its hidden workload-client subcommand, the client processes
// of a workload spread over several. workloads are the workload
// scenario's files; nil: the ready ones.
func scenarioTable(holderCmd holder.Command, clientCmd load.Command, workloads []scenarios.WorkloadFile) []bench.Scenario {
	return []bench.Scenario{
		scenarios.Latency(),
		scenarios.Throughput(),
		scenarios.HandoverConfig{Holder: holderCmd}.Scenario(),
		scenarios.FairnessConfig{}.Scenario(),
		scenarios.SafetyConfig{Holder: holderCmd}.Scenario(),
		scenarios.FailoverConfig{}.Scenario(),
		scenarios.Scale(),
		scenarios.WorkloadConfig{Workloads: workloads, QuickContenders: quickWorkloadContenders, Client: clientCmd}.Scenario(),
	}
}

// contenderTable returns every contender in run and display order: the
// locks, then the floors. Each row is described completely by its own
// package; adding a contender is its package and one line here.
func contenderTable() []bench.Contender {
	return []bench.Contender{
		monolock.Contender(),
		monolock.WarmContender(),
		monolock.FastOpenContender(),
		redisbench.RedisContender(),
		redisbench.RedlockContender(),
		etcd.Contender(),
		postgres.Contender(),
		postgres.KeepaliveContender(),
		redisbench.RedisSpinContender(),
		redisbench.RedlockSpinContender(),
		redisbench.RedisIncrContender(),
		floors.TCP(),
		floors.Redis(),
	}
}
