package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/etcd"
	"github.com/monolock/monolock-bench/bench/contenders/floors"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/contenders/monolockstandby"
	"github.com/monolock/monolock-bench/bench/contenders/postgres"
	"github.com/monolock/monolock-bench/bench/contenders/zookeeper"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/scenarios"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/redisson"
	"github.com/monolock/monolock-bench/redisbench/redissonfair"
)

// The two tables of the suite. Nothing but this command imports the
// scenarios and the contenders: tests take the rows they need from the
// packages themselves.

// quickWorkloadContenders are the pair the quick suite runs the ready
// workloads on, unless --contenders names others; the full suite runs
// every lock, and a workload file of the user's own runs on every
// contender either way.
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
	// chaosFaults (0: not a soak) and chaosParallel (0: one after
	// another) are --chaos-faults and --chaos-parallel.
	chaosFaults, chaosParallel int
	// workloads are the workload scenario's files; nil: the ready ones.
	workloads []scenarios.WorkloadFile
	// namedContenders: --contenders chose the contenders, so the quick
	// suite does not narrow them to its pair.
	namedContenders bool
	// workers (0: none) adds the scale scenario's sharded variant: its
	// idle sessions opened by this many worker pods (--backend kubernetes).
	workers int
}

// scenarioTable lists every scenario in run order. A new scenario is one
// more row.
func scenarioTable(o tableOptions) []bench.Scenario {
	return []bench.Scenario{
		scenarios.Latency(),
		throughput(0),
		quickWithout(scenarios.HandoverConfig{Holder: o.holder}.Scenario(), scenarios.HostLoss),
		scenarios.FairnessConfig{}.Scenario(),
		fewerRepetitions(quickWithout(scenarios.SafetyConfig{Holder: o.holder}.Scenario(), scenarios.HostLoss), 1,
			"every figure was the same in each of the 3 repetitions of both full runs 20261203T120600Z and 20261203T183025Z (49 figures)",
			scenarios.ClockJump, scenarios.ClockJumpQuorum),
		fewerRepetitions(quickWithout(scenarios.FailoverConfig{}.Scenario(), scenarios.FailoverGraceful, scenarios.FailoverPrimaryLost), 1,
			"no capability or ranking reads it (restart does), and its 2 repetitions in both full runs 20261203T120600Z and 20261203T183025Z were within 4% of each other for every lock but etcd",
			scenarios.FailoverGraceful),
		scenarios.ScaleConfig{Workers: o.workers}.Scenario(),
		scenarios.ChaosConfig{Holder: o.holder, Seed: o.chaosSeed, Duration: o.chaosDuration, Faults: o.chaosFaults, Parallel: o.chaosParallel, QuickFaults: quickChaosFaults}.Scenario(),
		scenarios.WorkloadConfig{Workloads: o.workloads, QuickContenders: o.quickPair(), Client: o.client}.Scenario(),
	}
}

// quickPair is the pair of the quick suite's ready
// workloads, none when the contenders were named.
func (o tableOptions) quickPair() []string {
	if o.namedContenders {
		return nil
	}
	return quickWorkloadContenders
}

// throughputScenario names the scenario throughput returns.
const throughputScenario = "throughput"

// throughput is the table's throughput scenario under a network of RTT
// rtt (0: loopback), whose window scales with it.
func throughput(rtt time.Duration) bench.Scenario {
	return scenarios.ThroughputConfig{RTT: rtt}.Scenario()
}

// quickWithout leaves the named variants out of s's quick runs, for the
// quick suite's time budget (each costs a lease or more per contender;
// the full run measures them), and records so in s's quick settings.
func quickWithout(s bench.Scenario, names ...string) bench.Scenario {
	variants, settings := s.Variants, s.Settings
	s.Variants = func(quick bool) []bench.Variant {
		vs := variants(quick)
		if quick {
			vs = slices.DeleteFunc(vs, func(v bench.Variant) bool { return slices.Contains(names, v.Name) })
		}
		return vs
	}
	s.Settings = func(quick bool) results.Settings {
		set := settings(quick)
		if quick {
			set["quick_without"] = strings.Join(names, ", ") + " (the quick suite's time budget: the full run measures them)"
		}
		return set
	}
	return s
}

// fewerRepetitions caps the named variants of s at n repetitions in a
// full run, where more buy nothing, so that the time goes to the
// variants whose verdicts flipped between full runs (the contenders'
// Repeats), and records so in s's full settings.
func fewerRepetitions(s bench.Scenario, n int, why string, names ...string) bench.Scenario {
	variants, settings := s.Variants, s.Settings
	s.Variants = func(quick bool) []bench.Variant {
		vs := variants(quick)
		for i, v := range vs {
			if slices.Contains(names, v.Name) && (v.MaxRepetitions == 0 || v.MaxRepetitions > n) {
				vs[i].MaxRepetitions = n
			}
		}
		return vs
	}
	s.Settings = func(quick bool) results.Settings {
		set := settings(quick)
		if !quick {
			set["fewer_repetitions"] = fmt.Sprintf("%s: %d (%s)", strings.Join(names, ", "), n, why)
		}
		return set
	}
	return s
}

// repeated gives c more repetitions of the variants whose verdicts
// flipped between full runs (bench.Contender.Repeats).
func repeated(c bench.Contender, rs ...bench.Repeat) bench.Contender {
	c.Repeats = append(c.Repeats, rs...)
	return c
}

// flipped says a capability verdict flipped between two full runs, for a
// Repeat's reason.
func flipped(capability, run1, from, run2, to string) string {
	return fmt.Sprintf("“%s” flipped between the full runs %s (%s) and %s (%s)", capability, run1, from, run2, to)
}

// contenderTable returns every contender in run and display order: the
// locks, then the floors. Each row is described completely by its own
// package; adding a contender is its package and one line here.
func contenderTable() []bench.Contender {
	return []bench.Contender{
		repeated(monolock.Contender(), bench.Repeat{Scenario: "scale", Variant: "idle-max-lease2s", Times: 3,
			Reason: flipped("holds every session at the largest count, lease 2s", "20261203T120600Z", "19,734 held, n=1", "20261203T183025Z", "5,251, n=1")}),
		monolock.WarmContender(),
		monolock.FastOpenContender(),
		monolockstandby.Contender(),
		repeated(redisbench.RedisContender(), bench.Repeat{Scenario: "scale", Variant: "idle-max-lease2s", Times: 3,
			Reason: flipped("holds every session at the largest count, lease 2s", "20261203T120600Z", "19,734 held, n=1", "20261203T183025Z", "612, n=1")}),
		redisbench.RedlockContender(),
		repeated(redisbench.RedlockFastContender(), bench.Repeat{Scenario: "failover", Variant: scenarios.FailoverUnsafe, Times: 3,
			Reason: flipped("no double grant when a server takes over without the previous grants", "20261203T120600Z", "2 double grants, n=2", "20261203T183025Z", "0, n=2")}),
		redisson.Contender(),
		redissonfair.Contender(),
		repeated(etcd.Contender(), bench.Repeat{Scenario: "handover", Variant: scenarios.Freeze, Times: 3,
			Reason: flipped("frees a frozen holder's lock within one lease", "20261203T120600Z", "slowest 2.36 s, n=2", "20261203T183025Z", "1.96 s, n=2")}),
		repeated(zookeeper.Contender(), bench.Repeat{Scenario: "scale", Variant: "idle-1k-lease2s", Times: 3,
			Reason: flipped("holds every session at the largest count, lease 2s", "20261207T191819Z", "1,000 of 1,000 held, n=1", "20261207T203950Z", "948, n=1")}),
		postgres.Contender(),
		postgres.KeepaliveContender(),
		postgres.PgBouncerContender(), postgres.PgBouncerXactContender(),
		redisbench.RedisSpinContender(),
		redisbench.RedlockSpinContender(),
		redisbench.RedisIncrContender(),
		floors.TCP(),
		floors.Redis(),
	}
}
