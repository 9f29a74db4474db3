package postgres

import "github.com/monolock/monolock-bench/bench/results"

// hostLoss is the handover variant in which the holder's host vanishes
// from the network (no FIN, no RST): only TCP's own timers end the
// session. Until a run has it, its rules have no figures.
const hostLoss = "host-loss"

// Claims returns the testable claims of the PostgreSQL comparison page,
// word for word, as rules about the contender subject ("postgres" with
// the server's default keepalives, "postgres-keepalive" with
// TunedKeepalives). Each threshold says why it is set where it is.
func Claims(subject string) []results.ClaimRule {
	failed := []results.ClaimGuard{{Metric: results.HandoverMetrics.Failed.Name, Label: "failed trials"}}
	rules := []results.ClaimRule{
		{
			ID:        subject + "-no-fifo",
			Claim:     "The manual gives **no promise about the sequence of the waiters**. There is no documented first-in, first-out (FIFO) fairness for advisory locks.",
			Statement: subject + " under contention on one hot lock: grants overtake earlier pending requests more often than request-timing noise explains.",
			Threshold: "holds when FIFO inversions > 1 per 1,000 grants in every repetition (monolock's tolerance for requests sent within one network delay); fails when ≤ 1 in every repetition, i.e. the waiters were served in order in this run",
			Scenario:  "fairness", Variant: "*", Subject: subject, Metric: results.FairnessMetrics.FIFOInversionsPer1k.Name,
			Label: "inversions per 1,000 grants",
			Op:    results.AtLeast, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange, Quote: []results.ClaimQuote{{Contender: "monolock"}},
		},
		{
			ID:        subject + "-blocked-call-returns",
			Claim:     "The function `pg_advisory_lock` blocks until the server gives the lock. The return of the blocked call is the notification.",
			Statement: subject + " handover after a graceful release: the median trial within 10 ms (monolock's bound for an immediate push), no failed trial.",
			Threshold: "holds when p50 ≤ 10 ms in every repetition and no trial failed; fails when above in every repetition or a trial failed",
			Scenario:  "handover", Variant: "graceful", Subject: subject, Metric: results.HandoverMetrics.P50.Name,
			Op: results.AtMost, Than: results.ClaimBound{Value: 10},
			Spread: results.SpreadRange, Guards: failed,
			Quote: []results.ClaimQuote{{Contender: "monolock"}},
		},
		{
			ID:        subject + "-crash-socket-closed",
			Claim:     "The server does this automatically at the end of a session, also after a disconnect that is not controlled. Thus a dead connection releases its locks — when the server sees that the connection is dead.",
			Statement: subject + " handover after SIGKILL of the holder process: its kernel closes the connection, so the server sees it at once; the median trial within 50 ms, no failed trial.",
			Threshold: "holds when p50 ≤ 50 ms in every repetition and no trial failed; fails when above in every repetition or a trial failed",
			Scenario:  "handover", Variant: "crash", Subject: subject, Metric: results.HandoverMetrics.P50.Name,
			// A FIN from the dead process's kernel, the backend's exit
			// and the waiter's wake-up: milliseconds, 50 on a loaded
			// machine.
			Op: results.AtMost, Than: results.ClaimBound{Value: 50},
			Spread: results.SpreadRange, Guards: failed,
			Quote: []results.ClaimQuote{{Contender: "monolock"}},
		},
	}
	if subject == "postgres" {
		return append(rules, results.ClaimRule{
			ID:        "postgres-host-loss-tcp",
			Claim:     "A session with a client that disappeared ends only when the server sees the problem. The manual is clear. The server finds a lost connection \"only at the next interaction with the socket\".",
			Statement: "postgres (default keepalives) handover after the holder's host is lost: the waiter is not served within one lease (the keepalive probes start after two hours on Linux).",
			Threshold: "holds when p50 ≥ 1 × lease in every repetition (a trial the waiter never got counts as failed, its time as the trial's limit); fails when p50 < lease in every repetition",
			Scenario:  "handover", Variant: hostLoss, Subject: subject, Metric: results.HandoverMetrics.P50.Name,
			Op: results.AtLeast, Than: results.ClaimBound{Parameter: "lease"},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.HandoverMetrics.Failed.Name}, {Contender: "postgres-keepalive"}, {Contender: "monolock"}},
		})
	}
	return append(rules, results.ClaimRule{
		ID:        subject + "-host-loss-tuned",
		Claim:     "TCP settings close this gap: `tcp_keepalives_idle`, `tcp_keepalives_interval`, `tcp_keepalives_count`, and `tcp_user_timeout`.",
		Statement: subject + " (" + "tcp_keepalives_idle=1, interval=1, count=3, tcp_user_timeout=3s) handover after the holder's host is lost: the median trial within 4.5 s, no failed trial.",
		Threshold: "holds when p50 ≤ 4.5 s in every repetition and no trial failed; fails when above in every repetition or a trial failed",
		Scenario:  "handover", Variant: hostLoss, Subject: subject, Metric: results.HandoverMetrics.P50.Name,
		// Idle 1s then three 1s probes: ~4s; 0.5s of slack for the
		// waiter and a loaded machine. The limit must stay below the
		// trial's own grant bound (2 leases + 1s, at least 3s: 5s at the
		// default lease of 2s), else a trial that never got the lock
		// could not fail it: 6s, the former limit, was such a defect.
		Op: results.AtMost, Than: results.ClaimBound{Value: 4500},
		Spread: results.SpreadRange, Guards: failed,
		Quote: []results.ClaimQuote{{Contender: "postgres"}, {Contender: "monolock"}},
	})
}

// Notes are the trade-offs of the PostgreSQL comparison page that a run
// does not measure.
func Notes() []string {
	return []string{
		"No new infrastructure: if PostgreSQL already runs, advisory locks cost no new daemon, port or failure mode; pg_advisory_xact_lock ties a lock to a transaction's work in the same database.",
		"Names: keys are one bigint (or two int4); names must be hashed by the client, and two names with the same 64-bit hash silently become one lock (here: the first 8 bytes of SHA-256).",
		"Poolers: session-level advisory locks do not work behind PgBouncer in transaction pooling mode (its usual mode); only transaction-level locks are safe there.",
		"Fencing: advisory locks return no token; the token here is a sequence drawn in the same round trip as the lock, which a careful user must add and every guarded write must carry.",
		"Capacity: each held or waiting session-level lock keeps a database backend from the max_connections budget busy; the lock table is max_locks_per_transaction × max_connections.",
		"Availability: the lock state lives only in the primary's shared memory; a failover to a replica loses it, as a monolock restart does.",
		"Dead-client detection is a server-wide TCP setting (tcp_keepalives_*, tcp_user_timeout, idle_session_timeout), one answer for all connections, not a choice per lock.",
	}
}
