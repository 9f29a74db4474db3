package monolock

import (
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// Claims returns the claims of monolock's comparison page, word for word,
// as rules the report evaluates against a run's figures. Each threshold
// below says why it is set where it is.
func Claims() []results.ClaimRule {
	// A handover failed when the waiter never got the lock: any failed
	// trial fails the handover claims outright.
	failed := []results.ClaimGuard{{Metric: results.HandoverMetrics.Failed.Name, Label: "failed trials"}}
	return []results.ClaimRule{
		{
			ID:        "acquire-latency",
			Claim:     "Acquisition latency is almost the same as Redis SET NX.",
			Statement: "Uncontended (latency, w1), monolock's median acquire p50 is within a factor of the Redis contender's.",
			Threshold: "holds when monolock/Redis stays within 1/1.5…1.5 for every pairing of repetitions (min/max spread); fails when it stays outside",
			Scenario:  "latency", Variant: "w1", Subject: "monolock", Metric: results.LatencyMetrics.AcquireP50.Name,
			// "Almost equal" means within a factor of 1.5 either way.
			Op: results.Within, Than: results.ClaimBound{Contender: "redis", Factor: 1.5},
			Spread: results.SpreadRange,
		},
		{
			ID:        "graceful-immediate",
			Claim:     "After a controlled stop the lock passes to the next waiter immediately.",
			Statement: "monolock handover after a graceful release: the median trial within a few milliseconds, no failed trial.",
			Threshold: "holds when p50 ≤ 10 ms in every repetition and no trial failed; fails when p50 > 10 ms in every repetition or any trial failed",
			Scenario:  "handover", Variant: "graceful", Subject: "monolock", Metric: results.HandoverMetrics.P50.Name,
			// Immediate: a few round trips, the holder process waking up
			// and scheduling on a busy machine fit in 10 ms. The median,
			// not a tail percentile: with a handful of trials the tail is
			// one scheduling hiccup.
			Op: results.AtMost, Than: results.ClaimBound{Value: 10},
			Spread: results.SpreadRange, Guards: failed,
			Quote: []results.ClaimQuote{{Metric: results.HandoverMetrics.P95.Name}, {Contender: "redis"}, {Contender: "redlock"}},
		},
		oneLease("crash-one-lease", "crash",
			"After a holder crashes, the next waiter gets the lock immediately or at most one lease later.",
			"monolock handover after SIGKILL of the holder: the slowest trial is at most one lease.", failed),
		oneLease("freeze-one-lease", "freeze",
			"A frozen holder (SIGSTOP) loses the lock after one lease of silence.",
			"monolock handover after SIGSTOP of the holder: the slowest trial is at most one lease.", failed),
		{
			ID:        "strict-fifo",
			Claim:     "Waiters are served in strict FIFO order.",
			Statement: "monolock under contention on one hot lock: no grant overtakes an earlier pending request.",
			Threshold: "holds when FIFO inversions ≤ 1 per 1,000 grants in every repetition (request times are taken before the request travels, so requests sent within one network delay may arrive in either order); fails when above in every repetition",
			Scenario:  "fairness", Variant: "*", Subject: "monolock", Metric: results.FairnessMetrics.FIFOInversionsPer1k.Name,
			Label: "inversions per 1,000 grants",
			// One inversion per 1,000 grants is tolerated: request times
			// are taken in the bench before the request travels.
			Op: results.AtMost, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange, Quote: []results.ClaimQuote{{Contender: "redis"}},
		},
		{
			ID:        "one-waiter-woken",
			Claim:     "On release only the next waiter is woken.",
			Statement: "monolock under contention: every grant costs one acquire request; no waiter is woken to find the lock taken and ask again.",
			Threshold: "holds when acquire requests per grant ≤ 1.05 in every repetition; fails when above in every repetition",
			Scenario:  "fairness", Variant: "*", Subject: "monolock", Metric: results.FairnessMetrics.AttemptsPerGrant.Name,
			Derive: &results.Derivation{Times: []string{"attempts"}, Per: results.FairnessMetrics.Grants.Name},
			Label:  "requests per grant",
			// A waiter woken in vain would ask again: 5% slack for the
			// requests still in flight when the run stops.
			Op: results.AtMost, Than: results.ClaimBound{Value: 1.05},
			Spread: results.SpreadRange, Quote: []results.ClaimQuote{{Contender: "redis"}},
		},
		{
			ID:        "quiet-contention",
			Claim:     "Contention is quiet: waiting clients do not poll the coordinator.",
			Statement: "monolock under contention on one hot lock: the server handles a small, constant number of commands per grant however many clients wait.",
			Threshold: "holds when server commands per grant (server_ops_per_grant, or server_ops_per_sec × seconds / grants) ≤ 2 in every repetition; fails when above in every repetition",
			Scenario:  "fairness", Variant: "*", Subject: "monolock", Metric: results.FairnessMetrics.ServerOpsPerGrant.Name,
			Derive: &results.Derivation{Times: []string{results.FairnessMetrics.ServerOpsPerSec.Name, "seconds"}, Per: results.FairnessMetrics.Grants.Name},
			Label:  "server commands per grant",
			// The request, its answer and an occasional heartbeat.
			Op: results.AtMost, Than: results.ClaimBound{Value: 2},
			Spread: results.SpreadRange, Quote: []results.ClaimQuote{{Contender: "redis"}},
		},
		{
			ID:        "fenced-no-stale-write",
			Claim:     "A fenced resource never accepts a stale write with monolock.",
			Statement: "Safety, pause (the holder frozen past its lease writes right after it resumes): the fenced store accepts no write from the old holder after the new holder's grant.",
			Threshold: "holds when unsafe_writes_fenced = 0 in every repetition; fails when it is above 0 in every repetition",
			Scenario:  "safety", Variant: "pause", Subject: "monolock", Metric: results.SafetyMetrics.UnsafeWritesFenced.Name,
			Op: results.AtMost, Than: results.ClaimBound{Value: 0},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.SafetyMetrics.UnsafeWritesUnfenced.Name}, {Metric: results.SafetyMetrics.FencedRejections.Name}},
		},
		{
			ID:        "holder-learns-first",
			Claim:     "The holder always learns first that it lost the lock.",
			Statement: "Safety, host-loss (the holder's packets to the server silently dropped): in every trial the holder's Lost fires before the next client is granted, i.e. the smallest margin (grant − Lost) is positive.",
			Threshold: "holds when learn_first_margin_min ≥ 1 ms in every repetition (positive beyond clock resolution); fails when it is below in every repetition",
			Scenario:  "safety", Variant: "host-loss", Subject: "monolock", Metric: results.SafetyMetrics.LearnFirstMarginMin.Name,
			Op: results.AtLeast, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.SafetyMetrics.LearnFirstMarginP50.Name}, {Contender: "redis"}, {Contender: "redlock"}},
		},
		{
			ID:        "single-point-no-grant-while-down",
			Claim:     "monolock is a single point of coordination: no grant while it is down.",
			Statement: "failover restart (the server SIGKILLed, restarted after the pause): no acquire attempt begun after the kill is granted before the restart begins. Expected to hold: it is a limitation by design, not a virtue.",
			Threshold: "holds when grants_while_down = 0 in every repetition; fails when above 0 in every repetition",
			Scenario:  "failover", Variant: "restart", Subject: "monolock", Metric: results.FailoverMetrics.GrantsWhileDown.Name,
			Label: "grants while the server was down",
			Op:    results.AtMost, Than: results.ClaimBound{Value: 0},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.FailoverMetrics.UnavailableMs.Name}, {Metric: results.FailoverMetrics.RecoveryMs.Name}},
		},
		{
			ID:        "tokens-increase-across-restart",
			Claim:     "Fencing tokens keep increasing across a restart.",
			Statement: "failover restart: in every repetition whose first grant after the restart came more than a second after the last grant before the kill, every token granted after the restart began exceeds every token granted before the kill. A token is the unix second of the latest grant and a counter (the server starts from unix_second<<20), so the documentation promises this only across grants more than a second apart, with the wall clock not stepped back; a quicker restart (a quick run's pause is 0.5 s) is left out, its tokens_monotonic shown in the failover table.",
			Threshold: "holds when tokens_promise_broken = 0 in every repetition where the promise applies; fails when 1 in every such repetition; not measured without one",
			Scenario:  "failover", Variant: "restart", Subject: "monolock", Metric: results.FailoverMetrics.TokensPromiseBroken.Name,
			Label: "repetitions more than a second apart with a backward token (1 = yes)",
			Op:    results.AtMost, Than: results.ClaimBound{Value: 0},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.FailoverMetrics.TokensMonotonic.Name}, {Metric: results.FailoverMetrics.TakeoverMs.Name}, {Metric: results.FailoverMetrics.TokenGap.Name}},
		},
		ThroughputTarget("monolock"),
	}
}

// oneLease is the rule "the slowest handover trial after mode is at most
// one lease", with 10% over the lease for detection and scheduling.
func oneLease(id, mode, claim, statement string, guards []results.ClaimGuard) results.ClaimRule {
	return results.ClaimRule{
		ID: id, Claim: claim, Statement: statement,
		Threshold: "holds when the max trial ≤ 1.1 × lease in every repetition and no trial failed; fails when it exceeds that in every repetition or a trial failed",
		Scenario:  "handover", Variant: mode, Subject: "monolock", Metric: results.HandoverMetrics.Max.Name,
		Op: results.AtMost, Than: results.ClaimBound{Parameter: "lease", Factor: 1.1},
		Spread: results.SpreadRange, Guards: guards,
	}
}

// Notes are the trade-offs of monolock's comparison page that a benchmark
// run does not measure (availability is measured: the failover scenario
// and its claims); the report lists them, labelled as not measured,
// under "which lock when" (results.ContenderInfo.Notes).
func Notes() []string {
	return []string{
		"Correctness under pauses: monolock hands out fencing tokens with every grant and its client gives up the lock before the server can expire it; Redis SET NX and Redlock return no token by themselves, so a paused holder can write after its TTL. Use tokens wherever the protected resource can check them.",
		"Clocks: the monolock server runs leases on the monotonic clock — a lease is a Go timer (monolock/internal/locktable/table.go:185), and lease times count from the server's start on the monotonic clock (monolock/internal/locktable/table.go:158) — so a wall-clock step on its host cannot expire a lease early; tokens are forced increasing, each the larger of the last token plus one and the wall-clock second shifted into the high bits (monolock/internal/locktable/tokens.go:35), so a wall-clock step back never repeats a token within a process. Its client gives a lease up after 0.8 × lease without confirmation (monolock/heartbeat.go:56). The safety scenario's clock-jump variants therefore do not apply to monolock: its server is a static Go binary whose clock no LD_PRELOAD interposer reaches, and nothing in it expires on the wall clock; this is stated from the code, not measured.",
		"Operations: Redis SET NX needs nothing new if Redis is already run; Redlock needs five independent masters; monolock is one more service (one static binary, standard library only, Prometheus metrics, an admin API to list holders and waiters and to force-release).",
	}
}

// kinds labels monolock's claims: the targets of the project (ids
// "target-…", and the scale targets of issue 16) as targets, the rest as
// monolock's own promises.
func kinds(rules []results.ClaimRule) []results.ClaimRule {
	for i, r := range rules {
		if r.Kind == "" && strings.HasPrefix(r.ID, "target-") {
			rules[i].Kind = results.ClaimTarget
		}
	}
	return results.OfKind(results.ClaimPromise, rules)
}
