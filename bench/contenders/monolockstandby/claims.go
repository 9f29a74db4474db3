package monolockstandby

import "github.com/monolock/monolock-bench/bench/results"

// Variants of the failover scenario the claims read (bench/scenarios
// names them; a contender package imports no scenario).
const (
	primaryLost     = "primary-lost"
	primaryLostFast = "primary-lost-fast"
)

// Claims returns the statements of the documentation's high-availability
// page as rules the report evaluates against a run's figures.
func Claims() []results.ClaimRule {
	keepalived, fast := "keepalived's example, /readyz every 1 s, fall 2", "/readyz every 100 ms, fall 2"
	gap := func(id, variant, how string) results.ClaimRule {
		return results.ClaimRule{
			ID:        id,
			Claim:     "The service gap is approximately D, the detection-plus-switch time of the failover mechanism.",
			Statement: "failover " + variant + " (" + how + "): the longest stretch without a grant, divided by D measured from the fault to the move, is at most 2.",
			// The workers retry with a doubling backoff, each delay at
			// most the time already waited: after the move the first
			// retry comes at most about D later, so a gap of 2 × D is
			// still "approximately D" plus the clients' own retry; more
			// means something beyond the mechanism keeps the service
			// away (a client's TCP retransmission timer, for one).
			Threshold: "holds when gap_over_d ≤ 2 in every repetition; fails when above 2 in every repetition",
			Scenario:  "failover", Variant: variant, Subject: Name, Metric: results.FailoverMetrics.GapOverD.Name,
			Label: "longest gap / D",
			Op:    results.AtMost, Than: results.ClaimBound{Value: 2},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.FailoverMetrics.DetectionMs.Name}, {Metric: results.FailoverMetrics.UnavailableMs.Name}},
		}
	}
	noNewFailure := func(id, variant, how, why string) results.ClaimRule {
		return results.ClaimRule{
			ID:        id,
			Claim:     "A failover adds no new failure mode (the failover fences the old primary).",
			Statement: "failover " + variant + " (" + how + "): with the address moved away from the old primary, no name is granted by the standby while a client still believes the primary's grant of it, neither the fenced nor the unfenced store accepts a stale write, and the fenced store never refuses the current owner. " + why,
			Threshold: "holds when double_grants = 0 in every repetition and no stale write was accepted and no owner's write refused; fails when above 0 in every repetition or any such write",
			Scenario:  "failover", Variant: variant, Subject: Name, Metric: results.FailoverMetrics.DoubleGrants.Name,
			Op: results.AtMost, Than: results.ClaimBound{Value: 0},
			Spread: results.SpreadRange,
			Guards: []results.ClaimGuard{
				{Metric: results.FailoverMetrics.UnsafeWritesUnfenced.Name, Label: "stale writes the unfenced store accepted"},
				{Metric: results.FailoverMetrics.UnsafeWritesFenced.Name, Label: "stale writes the fenced store accepted"},
				{Metric: results.FailoverMetrics.OwnerWritesRejected.Name, Label: "writes of the current owner the fenced store refused (tokens went backwards)"},
			},
			Quote: []results.ClaimQuote{{Metric: results.FailoverMetrics.HolderStopMs.Name}, {Metric: results.FailoverMetrics.DetectionMs.Name}, {Metric: results.FailoverMetrics.TokensMonotonic.Name}},
		}
	}
	const clock = " Both servers read this host's clock, so the NTP requirement holds exactly."
	return []results.ClaimRule{
		gap("standby-gap-about-d", primaryLost, keepalived),
		gap("standby-gap-about-d-fast", primaryLostFast, fast),
		noNewFailure("standby-no-new-failure-mode", primaryLost, keepalived,
			"Here D (at least two intervals, 2 s) exceeds 0.8 × lease, so every old holder has given up on its own before the standby can grant: the lease, not only the fence, keeps it safe."),
		noNewFailure("standby-no-new-failure-mode-fast", primaryLostFast, fast,
			"Here D (about 0.2–0.3 s) is below 0.8 × lease: an old holder may still believe its grant when the standby grants, until its next segment meets the reset the move causes; only the fencing tokens protect the resource then, and they are promised monotonic only for a takeover more than a second later."),
		{
			ID:        "standby-tokens-monotonic",
			Claim:     "Fencing tokens stay monotonic across a failover to the standby when it takes over more than a second after the primary's last grant (with NTP on the two machines).",
			Statement: "failover " + primaryLost + " (" + keepalived + "): every token the standby granted after the move exceeds every token the primary granted before the fault. D is at least two intervals (2 s), so the standby always takes over more than a second later: the promise applies in every repetition." + clock,
			Threshold: "holds when tokens_monotonic = 1 in every repetition; fails when 0 in every repetition",
			Scenario:  "failover", Variant: primaryLost, Subject: Name, Metric: results.FailoverMetrics.TokensMonotonic.Name,
			Label: "tokens after > tokens before (1 = yes)",
			Op:    results.AtLeast, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.FailoverMetrics.TokenGap.Name}, {Metric: results.FailoverMetrics.TakeoverMs.Name}, {Metric: results.FailoverMetrics.DetectionMs.Name}},
		},
		{
			ID:        "standby-tokens-monotonic-fast",
			Claim:     "Fencing tokens stay monotonic across a failover to the standby when it takes over more than a second after the primary's last grant (with NTP on the two machines).",
			Statement: "failover " + primaryLostFast + " (" + fast + "): no repetition in which the standby's first grant came more than a second after the primary's last one has a token after the move at or below one before. A token is the unix second of the latest grant and a counter, so a takeover within the second may go backwards without breaking the promise: such a repetition is left out (its tokens_monotonic is in the failover table), and with none left the claim is not measured." + clock,
			Threshold: "holds when tokens_promise_broken = 0 in every repetition that took over more than a second later; fails when 1 in every such repetition",
			Scenario:  "failover", Variant: primaryLostFast, Subject: Name, Metric: results.FailoverMetrics.TokensPromiseBroken.Name,
			Label: "repetitions with a later takeover and a backward token (1 = yes)",
			Op:    results.AtMost, Than: results.ClaimBound{Value: 0},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.FailoverMetrics.TokensMonotonic.Name}, {Metric: results.FailoverMetrics.TakeoverMs.Name}, {Metric: results.FailoverMetrics.TokenGap.Name}},
		},
	}
}
