package redisson

import (
	"strconv"

	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/redisbench"
)

// Claims returns the comparison page's claims about Redisson's lock as
// rules the report evaluates against a run's figures. The lock is not
// fair and no rule says it is.
func Claims() []results.ClaimRule {
	return []results.ClaimRule{
		SignalHandover(Name, Subject),
		NoPoll(Name, Subject),
		redisbench.CrashTTL(Name, Subject),
	}
}

// Subject names the lock in its claims and statements.
const Subject = "Redisson's lock (RLock)"

// SignalHandover is the rule "the waiter hears the release at once": a
// graceful handover within 10 ms, the bound of monolock's
// graceful-immediate rule. label names the lock in the claim and the
// statement.
func SignalHandover(contender, label string) results.ClaimRule {
	return results.ClaimRule{
		ID:        contender + "-signal-handover",
		Claim:     label + " sends a signal to the waiters through pub/sub.",
		Statement: label + " handover after a graceful release: the waiter, subscribed to the lock's channel, is granted within a few milliseconds of the release in the median trial, no trial failing.",
		Threshold: "holds when p50 ≤ 10 ms in every repetition and no trial failed; fails when p50 > 10 ms in every repetition or any trial failed",
		Scenario:  "handover", Variant: "graceful", Subject: contender, Metric: results.HandoverMetrics.P50.Name,
		Op: results.AtMost, Than: results.ClaimBound{Value: 10},
		Spread: results.SpreadRange,
		Guards: []results.ClaimGuard{{Metric: results.HandoverMetrics.Failed.Name, Label: "failed trials"}},
		Quote:  []results.ClaimQuote{{Metric: results.HandoverMetrics.P95.Name}, {Contender: "redis"}, {Contender: "monolock"}},
	}
}

// NoPollBound is the most acquire tries a waiter that does not poll makes
// per lease while the lock it waits for stays held, over a window of one
// lease: no unlock message comes, so it tries only when the remaining TTL
// its last refusal told has passed. The watchdog renews the lock every
// TTL/3, so that is ⅔ to 1 TTL after the refusal: its first retry falls in
// the window (it was refused before the window began, at most one TTL
// earlier), a second one at least ⅔ TTL after the first, a third could
// not. A waiter that polls every d makes lease/d (the redis contender,
// 50–250 ms jittered: about 40 at a 6s lease, 200 at 30s).
const NoPollBound = 2

// NoPoll is the rule "waiters do not poll" for a Redisson lock: the tries
// per waiter and lease while 1,000 separate clients wait on one held lock
// (scale, queue-1k, whose window spans the lease for these locks). label
// names the lock in the claim and the statement.
func NoPoll(contender, label string) results.ClaimRule {
	bound := strconv.Itoa(NoPollBound)
	return results.ClaimRule{
		ID:    contender + "-no-poll",
		Claim: label + " sends a signal to the waiters through pub/sub and does not poll.",
		Statement: "1,000 separate clients waiting on one held lock of " + label + " (scale, queue-1k; each waiter on a subscription connection of its own; a window of one lease): each waiter tries at most " + bound + " times per lease. " +
			"No unlock message comes while the lock stays held, so a waiter that does not poll tries only when the remaining TTL its last refusal told has passed: ⅔ to 1 TTL later, the watchdog renewing every TTL/3; in a window of one TTL (= lease) that is its first retry and at most one more. " +
			"A waiter that polls tries at every poll: lease / retry delay times (the redis contender's 50–250 ms: about 200 per lease at 30s, 40 at 6s).",
		Threshold: "holds when acquire tries per waiter per lease ≤ " + bound + " in every repetition (one try per ⅔ TTL, derived from the wait loop and the watchdog, not from a run); fails when above in every repetition",
		Scenario:  "scale", Variant: "queue-1k", Subject: contender, Metric: results.ScaleMetrics.WaiterTriesPerLease.Name,
		Label: "acquire tries per waiter per lease while 1,000 wait",
		Op:    results.AtMost, Than: results.ClaimBound{Value: NoPollBound},
		Spread: results.SpreadRange,
		Quote:  []results.ClaimQuote{{Metric: results.ScaleMetrics.WaitingOpsPerSec.Name}, {Contender: "redis"}, {Contender: "monolock"}},
	}
}
