package main

import (
	"context"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/fairness"
	"github.com/monolock/monolock-bench/bench/handover"
	"github.com/monolock/monolock-bench/bench/holder"
	"github.com/monolock/monolock-bench/bench/monolocker"
	"github.com/monolock/monolock-bench/bench/scenarios"
	"github.com/monolock/monolock-bench/bench/tcpfloor"
	"github.com/monolock/monolock-bench/redisbench"
)

// scenarioTable lists every scenario in run order. A new scenario is one
// more row. holderCmd starts this binary's hidden holder subcommand, the
// separate OS process that holds the lock in the handover scenario.
func scenarioTable(holderCmd holder.Command) []bench.Scenario {
	return []bench.Scenario{
		scenarios.Latency(),
		scenarios.Throughput(),
		handover.Scenario(handover.Config{Holder: holderCmd}),
		fairness.Scenario(fairness.Config{}),
	}
}

// contenderTable lists every contender. The -spin rows are the "fast spin"
// waiting strategy reported beside the default (redsync's jitter); they
// only run where workers contend.
func contenderTable() []bench.Contender {
	redis := func(name string, wait redisbench.Wait, contendedOnly bool) bench.Contender {
		return bench.Contender{
			Name: name, Role: bench.RoleRedis, ContendedOnly: contendedOnly,
			Settings: redisbench.Config{Wait: wait}.Settings(),
			Open: func(_ context.Context, addrs []string, lease time.Duration) (bench.Locker, error) {
				return redisbench.NewRedis(redisbench.Config{Addr: addrs[0], TTL: lease, Wait: wait})
			},
		}
	}
	redlock := func(name string, wait redisbench.Wait, contendedOnly bool) bench.Contender {
		return bench.Contender{
			Name: name, Role: bench.RoleRedlock, ContendedOnly: contendedOnly,
			Settings: redisbench.RedlockConfig{Addrs: make([]string, 5), Wait: wait}.Settings(),
			Open: func(_ context.Context, addrs []string, lease time.Duration) (bench.Locker, error) {
				return redisbench.NewRedlock(redisbench.RedlockConfig{Addrs: addrs, TTL: lease, Wait: wait})
			},
		}
	}
	return []bench.Contender{
		{
			Name: "monolock", Role: bench.RoleMonolock, Settings: monolocker.Settings(),
			Open: func(_ context.Context, addrs []string, lease time.Duration) (bench.Locker, error) {
				return monolocker.New(addrs[0], lease)
			},
		},
		redis("redis", redisbench.JitterWait, false),
		redlock("redlock", redisbench.JitterWait, false),
		redis("redis-spin", redisbench.SpinWait, true),
		redlock("redlock-spin", redisbench.SpinWait, true),
		{
			Name: "tcp-floor", Role: bench.RoleTCPFloor, Floor: true, Settings: tcpfloor.Settings(),
			Open: func(_ context.Context, addrs []string, lease time.Duration) (bench.Locker, error) {
				return tcpfloor.New(addrs[0], lease)
			},
		},
		{
			Name: "redis-floor", Role: bench.RoleRedis, Floor: true, Settings: redisbench.FloorSettings(0),
			Open: func(_ context.Context, addrs []string, _ time.Duration) (bench.Locker, error) {
				return redisbench.NewFloor(addrs[0], 0), nil
			},
		},
	}
}
