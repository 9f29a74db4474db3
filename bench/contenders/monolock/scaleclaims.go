package monolock

import "github.com/monolock/monolock-bench/bench/results"

// scaleClaims are the claims of the scale scenario. The targets of issue
// 16 (≤ 16 KiB per idle session, no load from waiting) are the thresholds;
// the report shows the measured slopes beside them. Issue 26's T2 (every
// session held at idle-max-lease2s, a keep-alive no dearer than Redis's
// watchdog extension) is two targets.
func scaleClaims() []results.ClaimRule {
	return []results.ClaimRule{
		{
			ID:        "scale-memory-small",
			Claim:     "Memory grows linearly with open connections and is small.",
			Statement: "10,000 idle holders at lease 30 s (scale, idle-10k): the monolock server's anonymous memory above the empty server is at most 16 KiB per session.",
			Threshold: "holds when server_bytes_per_session ≤ 16384 in every repetition; fails when above in every repetition",
			Scenario:  "scale", Variant: "idle-10k", Subject: "monolock", Metric: results.ScaleMetrics.ServerBytesPerSession.Name,
			Label: "server bytes per idle session",
			// 16 KiB: a goroutine stack or two, buffers and the table entry.
			Op: results.AtMost, Than: results.ClaimBound{Value: 16 << 10},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.ScaleMetrics.ServerBytesPerSessionSlope.Name}, {Contender: "redis"}, {Contender: "redlock"}},
		},
		{
			ID:        "scale-memory-linear",
			Claim:     "Memory grows linearly with open connections and is small.",
			Statement: "While 10,000 idle holders open (scale, idle-10k), the monolock server's memory sampled against the sessions held lies on a straight line.",
			Threshold: "holds when the least-squares fit's R² ≥ 0.9 in every repetition; fails when below in every repetition",
			Scenario:  "scale", Variant: "idle-10k", Subject: "monolock", Metric: results.ScaleMetrics.ServerBytesSlopeR2.Name,
			Label: "R² of memory against sessions",
			// 0.9: a Go heap grows in steps (GC cycles, span classes); a
			// straight line still explains nine tenths of the growth.
			Op: results.AtLeast, Than: results.ClaimBound{Value: 0.9},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.ScaleMetrics.ServerBytesPerSessionSlope.Name}},
		},
		{
			ID:        "scale-quiet-waiting",
			Claim:     "Waiting clients put no load on the coordinator.",
			Statement: "1,000 clients queued on one lock (scale, queue-1k): the monolock server serves no command beyond the sessions' keep-alives while they wait.",
			Threshold: "holds when commands other than keep-alives ≤ 1 per second in every repetition; fails when above in every repetition",
			Scenario:  "scale", Variant: "queue-1k", Subject: "monolock", Metric: results.ScaleMetrics.WaitingOpsPerSec.Name,
			Label: "commands/s beyond keep-alives while 1,000 wait",
			// 1/s: a scrape or a late request may fall in the window.
			Op: results.AtMost, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.ScaleMetrics.HeartbeatsPerSec.Name}, {Contender: "redis"}, {Contender: "redlock"}},
		},
		{
			ID:        "target-scale-promotion-depth",
			Claim:     "Target: promotion at the front of a deep queue is as fast as behind one waiter, within 2×.",
			Statement: "With 10,000 clients queued on one lock (scale, queue-10k), monolock's promotion p50 (release of the holder → grant of the next) is at most 2 × its p50 with one waiter (queue-1).",
			Threshold: "holds when queue-10k ≤ 2 × queue-1 for every pairing of repetitions; fails when above for every pairing",
			Scenario:  "scale", Variant: "queue-10k", Subject: "monolock", Metric: results.ScaleMetrics.PromotionP50.Name,
			Op: results.AtMost, Than: results.ClaimBound{Variant: "queue-1", Factor: 2},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.ScaleMetrics.PromotionP99.Name}, {Metric: results.ScaleMetrics.QueueFillMs.Name}},
		},
		{
			ID:        "target-scale-100k",
			Claim:     "Target: 100,000 sessions on 2 cores at lease 30 s, by the measured slopes.",
			Statement: "At the most idle holders the machine allows (scale, idle-max, lease 30 s), monolock's server CPU per session, times 100,000 sessions, is at most two cores (2,000 ms of CPU per second).",
			Threshold: "holds when server_cpu_ms_per_sec / sessions_reached ≤ 0.02 ms/s per session in every repetition; fails when above in every repetition",
			Scenario:  "scale", Variant: "idle-max", Subject: "monolock", Metric: "server_cpu_ms_per_session",
			Derive: &results.Derivation{Times: []string{results.ScaleMetrics.ServerCPUMsPerSec.Name}, Per: results.ScaleMetrics.SessionsReached.Name},
			Label:  "server CPU ms/s per idle session",
			Op:     results.AtMost, Than: results.ClaimBound{Value: 2000.0 / 100000},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.ScaleMetrics.SessionsReached.Name}, {Metric: results.ScaleMetrics.ServerBytesPerSessionSlope.Name}, {Metric: results.ScaleMetrics.HeartbeatsPerSec.Name}},
		},
		{
			ID:        "target-scale-heartbeat-linear",
			Claim:     "Target: heartbeat CPU grows linearly with sessions / lease.",
			Statement: "monolock's server CPU per keep-alive at the most idle holders the machine allows (scale, idle-max) is at most 2 × its CPU per keep-alive at 1,000 holders (idle-1k), both at lease 30 s: the cost of a keep-alive does not grow with the sessions (a fixed cost of the idle server makes it smaller at large C).",
			Threshold: "holds when idle-max ≤ 2 × idle-1k for every pairing of repetitions; fails when above for every pairing",
			Scenario:  "scale", Variant: "idle-max", Subject: "monolock", Metric: results.ScaleMetrics.ServerCPUUsPerHeartbeat.Name,
			Op: results.AtMost, Than: results.ClaimBound{Variant: "idle-1k", Factor: 2},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.ScaleMetrics.HeartbeatsPerSec.Name}, {Metric: results.ScaleMetrics.SessionsReached.Name}},
		},
		{
			ID:        "target-scale-lease2s-all-held",
			Claim:     "Target: at a 2 s lease monolock keeps every session it opens.",
			Statement: "At the most idle holders the machine allows at lease 2 s (scale, idle-max-lease2s), monolock still holds every session it opened after the window.",
			Threshold: "holds when sessions held / sessions opened ≥ 1 in every repetition; fails when below in every repetition",
			Scenario:  "scale", Variant: "idle-max-lease2s", Subject: "monolock", Metric: "sessions_held_share",
			Derive: &results.Derivation{Times: []string{results.ScaleMetrics.SessionsReached.Name}, Per: results.ScaleMetrics.Sessions.Name},
			Label:  "share of the opened sessions still held",
			Op:     results.AtLeast, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.ScaleMetrics.SessionsReached.Name}, {Metric: results.ScaleMetrics.ServerCPUMsPerSec.Name}, {Metric: results.ScaleMetrics.BenchCPUMsPerSec.Name}, {Contender: "redis", Metric: results.ScaleMetrics.SessionsReached.Name}},
		},
		{
			ID:        "target-scale-keepalive-cpu-redis",
			Claim:     "Target: a keep-alive costs the monolock server no more CPU than a Redis watchdog extension costs Redis.",
			Statement: "At the most idle holders the machine allows at lease 2 s (scale, idle-max-lease2s), monolock's server CPU per keep-alive is at most the Redis server's CPU per watchdog extension (the redis contender's keep-alive) in the same run.",
			Threshold: "holds when monolock ≤ redis for every pairing of repetitions; fails when above for every pairing",
			Scenario:  "scale", Variant: "idle-max-lease2s", Subject: "monolock", Metric: results.ScaleMetrics.ServerCPUUsPerHeartbeat.Name,
			Op: results.AtMost, Than: results.ClaimBound{Contender: "redis"},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.ScaleMetrics.ClientCPUUsPerHeartbeat.Name}, {Contender: "redis", Metric: results.ScaleMetrics.ClientCPUUsPerHeartbeat.Name}, {Metric: results.ScaleMetrics.HeartbeatsPerSec.Name}, {Metric: results.ScaleMetrics.SessionsReached.Name}},
		},
		{
			ID:        "target-scale-heartbeat-lease",
			Claim:     "Target: heartbeat CPU grows linearly with sessions / lease.",
			Statement: "monolock's server CPU per keep-alive with 10,000 idle holders at lease 2 s (scale, idle-10k-lease2s: 15 times the keep-alives) is at most 2 × its CPU per keep-alive at lease 30 s (idle-10k): the cost of a keep-alive does not grow with their rate.",
			Threshold: "holds when idle-10k-lease2s ≤ 2 × idle-10k for every pairing of repetitions; fails when above for every pairing",
			Scenario:  "scale", Variant: "idle-10k-lease2s", Subject: "monolock", Metric: results.ScaleMetrics.ServerCPUUsPerHeartbeat.Name,
			Op: results.AtMost, Than: results.ClaimBound{Variant: "idle-10k", Factor: 2},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.ScaleMetrics.HeartbeatsPerSec.Name}, {Metric: results.ScaleMetrics.SessionsReached.Name}, {Metric: results.ScaleMetrics.BenchCPUMsPerSec.Name}},
		},
	}
}
