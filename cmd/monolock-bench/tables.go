package main

import (
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/etcd"
	"github.com/monolock/monolock-bench/bench/contenders/floors"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/contenders/postgres"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/scenarios"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/redisson"
	"github.com/monolock/monolock-bench/redisbench/redissonfair"
)

// The two tables of the suite. Nothing but this command imports the
// scenarios and the contenders: tests take the rows they need from the
// packages themselves.

// scenarioTable lists every scenario in run order. A new scenario is one
// more row. holderCmd starts this binary's hidden holder subcommand, the
// separate OS process that holds the lock in the handover and safety
// scenarios and runs a client in the chaos scenario; chaosSeed (0:
// random) and chaosDuration (0: the default counts) are the chaos
// scenario's flags.
func scenarioTable(holderCmd holder.Command, chaosSeed uint64, chaosDuration time.Duration) []bench.Scenario {
	return []bench.Scenario{
		scenarios.Latency(),
		scenarios.Throughput(),
		scenarios.HandoverConfig{Holder: holderCmd}.Scenario(),
		scenarios.FairnessConfig{}.Scenario(),
		scenarios.SafetyConfig{Holder: holderCmd}.Scenario(),
		scenarios.FailoverConfig{}.Scenario(),
		scenarios.Scale(),
		scenarios.ChaosConfig{Holder: holderCmd, Seed: chaosSeed, Duration: chaosDuration}.Scenario(),
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
