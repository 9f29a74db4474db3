package etcd

import "github.com/monolock/monolock-bench/bench/results"

// Claims returns the testable claims of the etcd comparison page, word for
// word, as rules about the etcd contender. Each threshold says why it is
// set where it is.
func Claims() []results.ClaimRule {
	failed := []results.ClaimGuard{{Metric: results.HandoverMetrics.Failed.Name, Label: "failed trials"}}
	return []results.ClaimRule{
		{
			ID:        "etcd-quorum-write",
			Claim:     "Each acquisition is a quorum write. The leader makes a proposal, a majority of the members fsync it to the write-ahead log, and then the cluster commits it.",
			Statement: "Uncontended (latency, w1), etcd's median acquire p50 is at least 1.5 × monolock's (one round trip to one server that changes its memory).",
			Threshold: "holds when etcd/monolock ≥ 1.5 for every pairing of repetitions; fails when it stays below",
			Scenario:  "latency", Variant: "w1", Subject: "etcd", Metric: results.LatencyMetrics.AcquireP50.Name,
			// A claim here is a lease grant and a Txn, each a proposal
			// replicated to a majority and fsynced; 1.5 leaves room for a
			// fast disk and a loaded machine.
			Op: results.AtLeast, Than: results.ClaimBound{Contender: "monolock", Factor: 1.5},
			Spread: results.SpreadRange, Quote: []results.ClaimQuote{{Contender: "redis"}},
		},
		{
			ID:        "etcd-crash-ttl",
			Claim:     "Thus the detection latency is a maximum of the TTL. And because TTLs are whole seconds with a server-side minimum, the latency is seconds in practice.",
			Statement: "etcd handover after SIGKILL of the holder: the median trial takes at least half the TTL (the lease, not the crash, frees the lock) and the slowest at most 1.5 × TTL.",
			Threshold: "holds when p50 ≥ 0.5 × TTL (the TTL the cluster granted for the run's lease, setting ttl) in every repetition and no trial failed; fails when p50 stays below or a trial failed",
			Scenario:  "handover", Variant: "crash", Subject: "etcd", Metric: results.HandoverMetrics.P50.Name,
			// Keep-alives go every TTL/3, so the lease ends between 2/3
			// TTL and TTL after the crash; half the TTL is clear of both
			// a socket-close detection (milliseconds) and that window.
			Op: results.AtLeast, Than: results.ClaimBound{Parameter: "ttl", Factor: 0.5},
			Spread: results.SpreadRange, Guards: failed,
			Quote: []results.ClaimQuote{{Metric: results.HandoverMetrics.Max.Name}, {Contender: "monolock"}},
		},
		{
			ID:        "etcd-crash-at-most-ttl",
			Claim:     "Thus the detection latency is a maximum of the TTL.",
			Statement: "etcd handover after SIGKILL of the holder: the slowest trial is at most 1.5 × the TTL.",
			Threshold: "holds when the max trial ≤ 1.5 × TTL in every repetition and no trial failed; fails when above in every repetition or a trial failed",
			Scenario:  "handover", Variant: "crash", Subject: "etcd", Metric: results.HandoverMetrics.Max.Name,
			// The leader checks for expired leases every 500 ms, and the
			// waiter's watch and Get follow: half a TTL of slack.
			Op: results.AtMost, Than: results.ClaimBound{Parameter: "ttl", Factor: 1.5},
			Spread: results.SpreadRange, Guards: failed,
		},
		{
			ID:        "etcd-unlock-immediate",
			Claim:     "A controlled `Unlock` deletes the key immediately.",
			Statement: "etcd handover after a graceful release: the median trial within 50 ms, no failed trial.",
			Threshold: "holds when p50 ≤ 50 ms in every repetition and no trial failed; fails when above in every repetition or a trial failed",
			Scenario:  "handover", Variant: "graceful", Subject: "etcd", Metric: results.HandoverMetrics.P50.Name,
			// A delete and a revoke (two quorum writes) and a watch event:
			// a few fsyncs on a loaded machine fit in 50 ms.
			Op: results.AtMost, Than: results.ClaimBound{Value: 50},
			Spread: results.SpreadRange, Guards: failed,
			Quote: []results.ClaimQuote{{Contender: "monolock"}},
		},
		{
			ID:        "etcd-fair-wait-chain",
			Claim:     "This is the ZooKeeper-style wait chain, and it is fair. The server wakes the waiters in the sequence of creation, one at a time.",
			Statement: "etcd under contention on one hot lock: no grant overtakes an earlier pending request.",
			Threshold: "holds when FIFO inversions ≤ 1 per 1,000 grants in every repetition (request times are taken before the request travels); fails when above in every repetition",
			Scenario:  "fairness", Variant: "*", Subject: "etcd", Metric: results.FairnessMetrics.FIFOInversionsPer1k.Name,
			Label: "inversions per 1,000 grants",
			Op:    results.AtMost, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange, Quote: []results.ClaimQuote{{Contender: "monolock"}},
		},
		{
			ID:        "etcd-one-waiter-woken",
			Claim:     "There is no group of waiters that awake at the same time.",
			Statement: "etcd under contention: every grant costs one Txn; no waiter is woken to try again.",
			Threshold: "holds when Txn attempts per grant ≤ 1.05 in every repetition; fails when above in every repetition",
			Scenario:  "fairness", Variant: "*", Subject: "etcd", Metric: results.FairnessMetrics.AttemptsPerGrant.Name,
			Derive: &results.Derivation{Times: []string{"attempts"}, Per: results.FairnessMetrics.Grants.Name},
			Label:  "Txn requests per grant",
			// 5% slack for the requests in flight when the run stops.
			Op: results.AtMost, Than: results.ClaimBound{Value: 1.05},
			Spread: results.SpreadRange, Quote: []results.ClaimQuote{{Contender: "monolock"}},
		},
	}
}

// Notes are the trade-offs of the etcd comparison page that a run does
// not measure.
func Notes() []string {
	return []string{
		"Availability: etcd's locks keep working while a majority of the members is up (3 members survive one loss, 5 survive two); a leader failure costs an election. monolock and the single-server locks stop granting while their server is down.",
		"Fencing: the lock key's create revision is a token the client must read and pass on itself; revisions live in the Raft log, so they keep increasing across every failure short of losing the cluster.",
		"Operations: 3 or 5 members on fast disks (slow fsync destabilises consensus), history compaction, defragmentation that blocks a member while it runs, and a backend quota whose alarm puts the cluster into a read-and-delete maintenance mode until an operator clears it.",
		"Session: an etcd Session is an object to create, keep alive and close; a lock whose session is lost without a close stays until the TTL ends.",
	}
}
