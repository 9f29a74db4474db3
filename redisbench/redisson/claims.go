package redisson

import (
	"github.com/monolock/monolock-bench/bench/output/results"
	"github.com/monolock/monolock-bench/redisbench"
)

// Claims returns the comparison page's claims about Redisson's lock as
// rules the report evaluates against a run's figures. The lock is not
// fair and no rule says it is.
func Claims() []results.ClaimRule {
	return []results.ClaimRule{
		SignalHandover(Name, "Redisson's lock"),
		{
			ID:        Name + "-no-poll",
			Claim:     "Redisson sends a signal to the waiters through pub/sub and does not poll.",
			Statement: "Fairness, 8 clients on one hot lock: the Redis server sees at most 9 acquire tries per grant, the most the unlock messages account for (each release wakes one waiting thread of each of the other 7 clients, and each request makes two tries: before and after it subscribes); a waiter that polls tries again at every poll however often the lock changes hands.",
			Threshold: "holds when acquire tries per grant ≤ 9 in every repetition; fails when above in every repetition",
			Scenario:  "fairness", Variant: "n8", Subject: Name, Metric: "attempts_per_grant",
			Derive: &results.Derivation{Times: []string{"attempts"}, Per: "grants"},
			Label:  "acquire tries per grant",
			Op:     results.AtMost, Than: results.ClaimBound{Value: 9},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: "server_ops_per_grant"}, {Contender: "redis"}, {Contender: "monolock"}},
		},
		QuietQueue(Name, "Redisson's lock"),
		redisbench.CrashTTL(Name, "Redisson"),
	}
}

// SignalHandover is the rule "the waiter hears the release at once": a
// graceful handover within 10 ms, the bound of monolock's
// graceful-immediate rule. label names the lock in the statement.
func SignalHandover(contender, label string) results.ClaimRule {
	return results.ClaimRule{
		ID:        contender + "-signal-handover",
		Claim:     "Redisson sends a signal to the waiters through pub/sub.",
		Statement: label + " handover after a graceful release: the waiter, subscribed to the lock's channel, is granted within a few milliseconds of the release in the median trial, no trial failing.",
		Threshold: "holds when p50 ≤ 10 ms in every repetition and no trial failed; fails when p50 > 10 ms in every repetition or any trial failed",
		Scenario:  "handover", Variant: "graceful", Subject: contender, Metric: "p50",
		Op: results.AtMost, Than: results.ClaimBound{Value: 10},
		Spread: results.SpreadRange,
		Guards: []results.ClaimGuard{{Metric: "failed", Label: "failed trials"}},
		Quote:  []results.ClaimQuote{{Metric: "p95"}, {Contender: "redis"}, {Contender: "monolock"}},
	}
}

// QuietQueue is the rule "waiting puts no load on the server" for a
// Redisson lock, on the bound of monolock's scale-quiet-waiting rule (with
// the renewal scripts' extra commands). The
// scenario's window ends before the waiters' first retry at the remaining
// TTL, so the rule judges the waiting between those retries; the
// statement says so.
func QuietQueue(contender, label string) results.ClaimRule {
	return results.ClaimRule{
		ID:        contender + "-no-poll-queue",
		Claim:     "Redisson sends a signal to the waiters through pub/sub and does not poll.",
		Statement: "1,000 clients waiting on one held lock (scale, queue-1k): the Redis server serves no command beyond the holder's keep-alives while they wait, over the scenario's window (whole lease/4 periods from the moment the queue is full). " + label + "'s waiters are silent until the remaining TTL they were told has passed, ⅔–1 TTL after they queued while the watchdog renews the lock, and then each tries once: the window ends before that, so a hold says they do not poll between those retries, not that waiting costs nothing (one try per waiter per ⅔–1 TTL).",
		Threshold: "holds when commands other than keep-alives ≤ 2 per second in every repetition: monolock's 1/s, plus the EVALSHA and PEXPIRE of each renewal script, which the keep-alive counter (one per renewal, its HEXISTS) leaves in — one renewal per ttl/3 adds 6/lease per second, 1/s at the quick lease of 6 s; fails when above in every repetition",
		Scenario:  "scale", Variant: "queue-1k", Subject: contender, Metric: "waiting_ops_per_sec",
		Label: "commands/s beyond keep-alives while 1,000 wait",
		Op:    results.AtMost, Than: results.ClaimBound{Value: 2},
		Spread: results.SpreadRange,
		Quote:  []results.ClaimQuote{{Metric: "heartbeats_per_sec"}, {Contender: "redis"}, {Contender: "monolock"}},
	}
}
