package redissonfair

import (
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/redisbench"
	"github.com/monolock/monolock-bench/redisbench/redisson"
)

// Subject names the lock in its claims and statements.
const Subject = "Redisson's fair lock"

// Claims returns the comparison page's claims about Redisson's fair lock
// as rules the report evaluates against a run's figures.
func Claims() []results.ClaimRule {
	return []results.ClaimRule{
		{
			ID:        Name + "-fifo",
			Claim:     "Redisson's fair lock gives the lock to the threads in the sequence of their requests.",
			Statement: "Redisson's fair lock under contention on one hot lock: no grant overtakes an earlier pending request.",
			Threshold: "holds when FIFO inversions ≤ 1 per 1,000 grants in every repetition (request times are taken before the request travels, so requests sent within one network delay may arrive in either order; the bound of monolock's strict-fifo rule); fails when above in every repetition",
			Scenario:  "fairness", Variant: "*", Subject: Name, Metric: results.FairnessMetrics.FIFOInversionsPer1k.Name,
			Label: "inversions per 1,000 grants",
			Op:    results.AtMost, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Contender: redisson.Name}, {Contender: "monolock"}},
		},
		redisson.SignalHandover(Name, Subject),
		redisson.NoPoll(Name, Subject),
		redisbench.CrashTTL(Name, Subject),
	}
}
