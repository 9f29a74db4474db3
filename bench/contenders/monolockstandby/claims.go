package monolockstandby

import "github.com/monolock/monolock-bench/bench/output/results"

// Variants of the failover scenario the claims read (bench/scenarios
// names them; a contender package imports no scenario).
const (
	primaryLost     = "primary-lost"
	primaryLostFast = "primary-lost-fast"
)

// Claims returns the statements of the documentation's high-availability
// page as rules the report evaluates against a run's figures.
func Claims() []results.ClaimRule {
	tokens := func(id, variant, how string) results.ClaimRule {
		return results.ClaimRule{
			ID:        id,
			Claim:     "Fencing tokens stay monotonic across a failover to the standby (with NTP on the two machines).",
			Statement: "failover " + variant + " (" + how + "): every token the standby granted after the move exceeds every token the primary granted before the fault. Both servers read this host's clock, so the NTP requirement holds exactly; the page argues that D exceeds a second, since a token is the unix second of the grant and a counter.",
			Threshold: "holds when tokens_monotonic = 1 in every repetition; fails when 0 in every repetition",
			Scenario:  "failover", Variant: variant, Subject: Name, Metric: "tokens_monotonic",
			Label: "tokens after > tokens before (1 = yes)",
			Op:    results.AtLeast, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: "token_gap"}, {Metric: "d_ms"}},
		}
	}
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
			// away.
			Threshold: "holds when gap_over_d ≤ 2 in every repetition; fails when above 2 in every repetition",
			Scenario:  "failover", Variant: variant, Subject: Name, Metric: "gap_over_d",
			Label: "longest gap / D",
			Op:    results.AtMost, Than: results.ClaimBound{Value: 2},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: "d_ms"}, {Metric: "unavailable_ms"}},
		}
	}
	keepalived, fast := "keepalived's example, /readyz every 1 s, fall 2", "/readyz every 100 ms, fall 2"
	return []results.ClaimRule{
		gap("standby-gap-about-d", primaryLost, keepalived),
		gap("standby-gap-about-d-fast", primaryLostFast, fast),
		{
			ID:        "standby-no-new-failure-mode",
			Claim:     "A failover adds no new failure mode (the failover fences the old primary).",
			Statement: "failover " + primaryLost + ": with the address moved (every connection to the old primary reset), no name is granted by the standby while a client still believes the primary's grant of it, and neither the fenced nor the unfenced store accepts a stale write.",
			Threshold: "holds when double_grants = 0 in every repetition and no stale write was accepted; fails when above 0 in every repetition or a stale write was accepted",
			Scenario:  "failover", Variant: primaryLost, Subject: Name, Metric: "double_grants",
			Op: results.AtMost, Than: results.ClaimBound{Value: 0},
			Spread: results.SpreadRange,
			Guards: []results.ClaimGuard{{Metric: "unsafe_writes_unfenced", Label: "stale writes the unfenced store accepted"}, {Metric: "unsafe_writes_fenced", Label: "stale writes the fenced store accepted"}},
			Quote:  []results.ClaimQuote{{Metric: "holder_stop_ms"}, {Metric: "d_ms"}},
		},
		tokens("standby-tokens-monotonic", primaryLost, keepalived),
		tokens("standby-tokens-monotonic-fast", primaryLostFast, fast),
	}
}
