package redissonlock

import (
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/redisbench"
)

// CountersSource says what NewCounters reads. Each counter is the calls
// of one command that only one script or step runs (Redis 7 counts the
// commands a script runs).
const CountersSource = "INFO commandstats: commands = calls of every command but INFO (scripts count with every command they run, SUBSCRIBE, UNSUBSCRIBE and PUBLISH too); " +
	"attempts = EXISTS calls (the acquire script runs one per try, no other script runs it); " +
	"waiting = PING calls (a thread that is refused subscribes, tries again and, refused again, sends one PING on its subscription connection before it only waits: a waiter counts once it will hear the unlock message and has no try in flight; none polls); " +
	"keep-alives = HEXISTS calls (the watchdog's renewal script runs one per renewal, no other script runs it)"

// NewCounters returns the coordinator counters of the Redis servers of a
// Redisson lock (one server; see CountersSource).
func NewCounters(servers []bench.Server) (bench.Coordinator, error) {
	return redisbench.CommandCounters(servers, func(calls map[string]int64, _ int) bench.Counts {
		return bench.Counts{Attempts: calls["exists"], Waiting: calls["ping"], KeepAlives: calls["hexists"]}
	})
}
