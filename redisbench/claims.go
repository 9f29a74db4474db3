package redisbench

import "github.com/monolock/monolock-bench/bench/results"

// claimsAbout returns the rules of Claims whose subject is the contender
// name (none for the waiting-strategy variants).
func claimsAbout(name string) []results.ClaimRule {
	var out []results.ClaimRule
	for _, c := range Claims() {
		if c.Subject == name {
			out = append(out, c)
		}
	}
	return out
}

// Claims returns the claims of the comparison page about the Redis
// contenders, word for word, as rules the report evaluates against a run's
// figures.
func Claims() []results.ClaimRule {
	return []results.ClaimRule{
		{
			ID:        "short-lock-throughput",
			Claim:     "At a high rate of very short locks Redis, which reuses connections, gives more throughput.",
			Statement: "Short locks (hold 0) on distinct keys at the highest worker count: the Redis contender completes more cycles/s than monolock.",
			Threshold: "holds when Redis's slowest repetition is ≥ 1.05× monolock's fastest; fails when Redis's fastest is < 1.05× monolock's slowest",
			Scenario:  "throughput", Variant: "distinct-w*", Pick: results.PickLargest, Subject: "redis", Metric: results.ThroughputMetrics.CyclesPerSec.Name,
			// "More" means at least 5% more.
			Op: results.AtLeast, Than: results.ClaimBound{Contender: "monolock", Factor: 1.05},
			Spread: results.SpreadRange,
		},
		CrashTTL("redis", "Redis"),
		CrashTTL("redlock", "Redlock"),
		{
			ID:        "redlock-clock-safety",
			Claim:     "Redlock's safety depends on clocks.",
			Statement: "Safety, clock-jump-redlock (Kleppmann's sequence: A holds masters 1–3, master 3's wall clock steps forward past the TTL, B reaches masters 3–5): B is granted while A still believes it holds the lock.",
			Threshold: "holds when double_grants ≥ 1 in every repetition; fails when it is 0 in every repetition",
			Scenario:  "safety", Variant: "clock-jump-redlock", Subject: "redlock", Metric: results.SafetyMetrics.DoubleGrants.Name,
			Op: results.AtLeast, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.SafetyMetrics.UnsafeWritesUnfenced.Name}, {Metric: results.SafetyMetrics.Trials.Name}},
		},
		{
			ID:        "redlock-minority-down",
			Claim:     "Redlock keeps granting with two of five masters down.",
			Statement: "failover minority-down (two of the five masters SIGKILLed and kept down under a steady load): no stretch without a grant longer than one TTL.",
			Threshold: "holds when unavailable_ms ≤ TTL in every repetition; fails when above it in every repetition",
			Scenario:  "failover", Variant: "minority-down", Subject: "redlock", Metric: results.FailoverMetrics.UnavailableMs.Name,
			Op: results.AtMost, Than: results.ClaimBound{Parameter: "lease"},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.FailoverMetrics.GrantRateRatio.Name}, {Metric: results.FailoverMetrics.AcquireP99DuringFault.Name}},
		},
		{
			ID:        "redlock-fast-minority-down",
			Claim:     "Redlock keeps granting with two of five masters down.",
			Statement: "failover minority-down, Redlock with per-master timeouts of a few round trips (redlock-fast): no stretch without a grant longer than one TTL.",
			Threshold: "holds when unavailable_ms ≤ TTL in every repetition; fails when above it in every repetition",
			Scenario:  "failover", Variant: "minority-down", Subject: "redlock-fast", Metric: results.FailoverMetrics.UnavailableMs.Name,
			Op: results.AtMost, Than: results.ClaimBound{Parameter: "lease"},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.FailoverMetrics.GrantRateRatio.Name}, {Metric: results.FailoverMetrics.AcquireP99DuringFault.Name}},
		},
		{
			ID:        "redlock-unsafe-restart",
			Claim:     "Restarting a Redlock master without persistence or delay can grant a lock twice.",
			Statement: "failover restart-unsafe: A holds a lock on masters 1–3, master 3 (no persistence) is killed and restarted at once, B (reaching 3–5) acquires while A still believes it holds the lock.",
			Threshold: "holds when at least one double grant is seen in every repetition; fails when none is seen in any",
			Scenario:  "failover", Variant: "restart-unsafe", Subject: "redlock", Metric: results.FailoverMetrics.DoubleGrants.Name,
			Op: results.AtLeast, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.FailoverMetrics.UnsafeWrites.Name}},
		},
	}
}

// CrashTTL is the rule "a crashed holder's key lives until its TTL runs
// out". The TTL counts from the watchdog's last extension, at most ttl/3
// before the crash, so the handover is at least TTL − ttl/3: the threshold
// is 2/3 of the TTL less 10% for timing.
func CrashTTL(contender, label string) results.ClaimRule {
	return results.ClaimRule{
		ID:        contender + "-crash-ttl",
		Claim:     label + " keeps a crashed holder's lock until its TTL expires.",
		Statement: label + " handover after SIGKILL of the holder: the waiter gets the lock only when the key expires, at least TTL minus one watchdog period (ttl/3) after the crash.",
		Threshold: "holds when p50 ≥ 0.6 × TTL in every repetition; fails when p50 < 0.6 × TTL in every repetition",
		Scenario:  "handover", Variant: "crash", Subject: contender, Metric: results.HandoverMetrics.P50.Name,
		Op: results.AtLeast, Than: results.ClaimBound{Parameter: "lease", Factor: 0.6},
		Spread: results.SpreadRange,
	}
}
