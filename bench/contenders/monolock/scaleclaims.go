package monolocker

import "github.com/monolock/monolock-bench/bench/results"

// scaleClaims are the claims of the scale scenario. The targets of issue
// 16 (≤ 16 KiB per idle session, no load from waiting) are the thresholds;
// the report shows the measured slopes beside them.
func scaleClaims() []results.ClaimRule {
	return []results.ClaimRule{
		{
			ID:        "scale-memory-small",
			Claim:     "Memory grows linearly with open connections and is small.",
			Statement: "10,000 idle holders at lease 30 s (scale, idle-10k): the monolock server's anonymous memory above the empty server is at most 16 KiB per session.",
			Threshold: "holds when server_bytes_per_session ≤ 16384 in every repetition; fails when above in every repetition",
			Scenario:  "scale", Variant: "idle-10k", Subject: "monolock", Metric: "server_bytes_per_session",
			Label: "server bytes per idle session",
			// 16 KiB: a goroutine stack or two, buffers and the table entry.
			Op: results.AtMost, Than: results.ClaimBound{Value: 16 << 10},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: "server_bytes_per_session_slope"}, {Contender: "redis"}, {Contender: "redlock"}},
		},
		{
			ID:        "scale-memory-linear",
			Claim:     "Memory grows linearly with open connections and is small.",
			Statement: "While 10,000 idle holders open (scale, idle-10k), the monolock server's memory sampled against the sessions held lies on a straight line.",
			Threshold: "holds when the least-squares fit's R² ≥ 0.9 in every repetition; fails when below in every repetition",
			Scenario:  "scale", Variant: "idle-10k", Subject: "monolock", Metric: "server_bytes_slope_r2",
			Label: "R² of memory against sessions",
			// 0.9: a Go heap grows in steps (GC cycles, span classes); a
			// straight line still explains nine tenths of the growth.
			Op: results.AtLeast, Than: results.ClaimBound{Value: 0.9},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: "server_bytes_per_session_slope"}},
		},
		{
			ID:        "scale-quiet-waiting",
			Claim:     "Waiting clients put no load on the coordinator.",
			Statement: "1,000 clients queued on one lock (scale, queue-1k): the monolock server serves no command beyond the sessions' keep-alives while they wait.",
			Threshold: "holds when commands other than keep-alives ≤ 1 per second in every repetition; fails when above in every repetition",
			Scenario:  "scale", Variant: "queue-1k", Subject: "monolock", Metric: "waiting_ops_per_sec",
			Label: "commands/s beyond keep-alives while 1,000 wait",
			// 1/s: a scrape or a late request may fall in the window.
			Op: results.AtMost, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: "heartbeats_per_sec"}, {Contender: "redis"}, {Contender: "redlock"}},
		},
	}
}
