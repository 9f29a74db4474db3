package main

import (
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/etcd"
	"github.com/monolock/monolock-bench/bench/contenders/floors"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/contenders/monolockstandby"
	"github.com/monolock/monolock-bench/bench/contenders/postgres"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/scenarios"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/redisson"
	"github.com/monolock/monolock-bench/redisbench/redissonfair"
)

// The two tables of the suite. Nothing but this command imports the
// scenarios and the contenders: tests take the rows they need from the
// packages themselves.

// quickWorkloadContenders are the pair the quick suite runs the workloads
// on; the full suite runs every lock.
var quickWorkloadContenders = []string{"monolock", "redis"}

// quickChaosFaults are the faults of a quick chaos step (a client pause
// of the holder): the quick suite's time budget; the full run keeps its
// schedule.
const quickChaosFaults = 1

// tableOptions are what the scenario table's rows take from the command
// line.
type tableOptions struct {
	// holder starts this binary's hidden holder subcommand, the separate
	// OS process that holds the lock in the handover and safety scenarios
	// and runs a client in the chaos scenario; client its hidden
	// workload-client subcommand, the client processes of a workload
	// spread over several.
	holder holder.Command
	client load.Command
	// chaosSeed (0: random) and chaosDuration (0: the default counts) are
	// the chaos scenario's flags.
	chaosSeed     uint64
	chaosDuration time.Duration
	// workloads are the workload scenario's files; nil: the ready ones.
	workloads []scenarios.WorkloadFile
}

// scenarioTable lists every scenario in run order. A new scenario is one
// more row.
func scenarioTable(o tableOptions) []bench.Scenario {
	return []bench.Scenario{
		scenarios.Latency(),
		scenarios.Throughput(),
		scenarios.HandoverConfig{Holder: o.holder}.Scenario(),
		scenarios.FairnessConfig{}.Scenario(),
		scenarios.SafetyConfig{Holder: o.holder}.Scenario(),
		scenarios.FailoverConfig{}.Scenario(),
		scenarios.Scale(),
		scenarios.ChaosConfig{Holder: o.holder, Seed: o.chaosSeed, Duration: o.chaosDuration, QuickFaults: quickChaosFaults}.Scenario(),
		scenarios.WorkloadConfig{Workloads: o.workloads, QuickContenders: quickWorkloadContenders, Client: o.client}.Scenario(),
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
		monolockstandby.Contender(),
		redisbench.RedisContender(),
		redisbench.RedlockContender(),
		redisbench.RedlockFastContender(),
		redisson.Contender(),
		redissonfair.Contender(),
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
