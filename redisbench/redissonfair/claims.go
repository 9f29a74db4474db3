package redissonfair

import (
	"github.com/monolock/monolock-bench/bench/output/results"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/redisson"
)

// Claims returns the comparison page's claims about Redisson's fair lock
// as rules the report evaluates against a run's figures.
func Claims() []results.ClaimRule {
	return []results.ClaimRule{
		{
			ID:        Name + "-fifo",
			Claim:     "Redisson's fair lock gives the lock to the threads in the sequence of their requests.",
			Statement: "Redisson's fair lock under contention on one hot lock: no grant overtakes an earlier pending request.",
			Threshold: "holds when FIFO inversions ≤ 1 per 1,000 grants in every repetition (request times are taken before the request travels, so requests sent within one network delay may arrive in either order; the bound of monolock's strict-fifo rule); fails when above in every repetition",
			Scenario:  "fairness", Variant: "*", Subject: Name, Metric: "fifo_inversions_per_1k",
			Label: "inversions per 1,000 grants",
			Op:    results.AtMost, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Contender: redisson.Name}, {Contender: "monolock"}},
		},
		redisson.SignalHandover(Name, "Redisson's fair lock"),
		{
			ID:        Name + "-no-poll",
			Claim:     "Redisson sends a signal to the waiters through pub/sub and does not poll.",
			Statement: "Fairness, 8 clients on one hot lock: the Redis server sees at most 3.3 acquire tries per grant, what the unlock messages account for (a release wakes the thread at the front only, which tries once; each request makes two tries, before and after it subscribes) with 10% for the waiters' retries at the remaining TTL. Any tries beyond were caused by no message: a queued thread that finds the lock free while the front thread has not yet taken it is told 0 ms (Redisson's max(0, PTTL)) and tries again at once, a spin for as long as the handover takes.",
			Threshold: "holds when acquire tries per grant ≤ 3.3 in every repetition; fails when above in every repetition",
			Scenario:  "fairness", Variant: "n8", Subject: Name, Metric: "attempts_per_grant",
			Derive: &results.Derivation{Times: []string{"attempts"}, Per: "grants"},
			Label:  "acquire tries per grant",
			Op:     results.AtMost, Than: results.ClaimBound{Value: 3.3},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: "server_ops_per_grant"}, {Contender: redisson.Name}, {Contender: "monolock"}},
		},
		redisson.QuietQueue(Name, "Redisson's fair lock"),
		redisbench.CrashTTL(Name, "Redisson (fair lock)"),
	}
}
