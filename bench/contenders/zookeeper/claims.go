package zookeeper

import "github.com/monolock/monolock-bench/bench/results"

// Claims returns the testable claims of ZooKeeper's and Curator's
// documentation about the recipe, quoted word for word, as rules about
// the zookeeper contender. Each threshold says why it is set where it is.
func Claims() []results.ClaimRule {
	failed := []results.ClaimGuard{{Metric: results.HandoverMetrics.Failed.Name, Label: "failed trials"}}
	return []results.ClaimRule{
		{
			ID:        "zookeeper-ephemeral-session",
			Claim:     "ZooKeeper Overview and Programmer's Guide, Ephemeral Nodes: \"ZooKeeper also has the notion of ephemeral nodes. These znodes exists as long as the session that created the znode is active. When the session ends the znode is deleted.\"",
			Statement: "zookeeper handover after SIGKILL of the holder: the closed socket does not end the session, its timeout does, so the median trial takes at least half the session timeout.",
			Threshold: "holds when p50 ≥ 0.5 × session_timeout (the timeout the ensemble granted for the run's lease) in every repetition and no trial failed; fails when p50 stays below or a trial failed",
			Scenario:  "handover", Variant: "crash", Subject: "zookeeper", Metric: results.HandoverMetrics.P50.Name,
			// The client pings every third of the timeout, so the session
			// ends between 2/3 of the timeout and the timeout (plus a
			// tick) after the crash; half clears a socket-close
			// detection (milliseconds) and that window.
			Op: results.AtLeast, Than: results.ClaimBound{Parameter: "session_timeout", Factor: 0.5},
			Spread: results.SpreadRange, Guards: failed,
			Quote: []results.ClaimQuote{{Metric: results.HandoverMetrics.Max.Name}, {Contender: "etcd"}, {Contender: "monolock"}},
		},
		{
			ID:        "zookeeper-ephemeral-at-most-timeout",
			Claim:     "ZooKeeper Programmer's Guide, Ephemeral Nodes: \"When the session ends the znode is deleted.\"",
			Statement: "zookeeper handover after SIGKILL of the holder: the slowest trial is at most 1.5 × the session timeout.",
			Threshold: "holds when the max trial ≤ 1.5 × session_timeout in every repetition and no trial failed; fails when above in every repetition or a trial failed",
			Scenario:  "handover", Variant: "crash", Subject: "zookeeper", Metric: results.HandoverMetrics.Max.Name,
			// The leader expires sessions in buckets of one tick (100 ms)
			// and the waiter's watch event follows: half a timeout of
			// slack covers both on a loaded machine.
			Op: results.AtMost, Than: results.ClaimBound{Parameter: "session_timeout", Factor: 1.5},
			Spread: results.SpreadRange, Guards: failed,
		},
		{
			ID:        "zookeeper-fifo",
			Claim:     "Curator, InterProcessMutex (the same recipe): \"Further, this mutex is 'fair' - each user will get the mutex in the order requested (from ZK's point of view)\"",
			Statement: "zookeeper under contention on one hot lock: no grant overtakes an earlier pending request (waiters are served in the order of their nodes' sequence numbers).",
			Threshold: "holds when FIFO inversions ≤ 1 per 1,000 grants in every repetition (request times are taken before the request travels); fails when above in every repetition",
			Scenario:  "fairness", Variant: "*", Subject: "zookeeper", Metric: results.FairnessMetrics.FIFOInversionsPer1k.Name,
			Label: "inversions per 1,000 grants",
			Op:    results.AtMost, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange, Quote: []results.ClaimQuote{{Contender: "etcd"}, {Contender: "monolock"}},
		},
		{
			ID:        "zookeeper-suspended-is-lost",
			Claim:     "Curator recipes, Shared Lock (Error Handling): \"If a SUSPENDED state is reported you cannot be certain that you still hold the lock unless you subsequently receive a RECONNECTED state. If a LOST state is reported it is certain that you no longer hold the lock.\"",
			Statement: "Safety, host-loss (the holder's packets silently dropped): the holder, which treats a lost connection (SUSPENDED) as a lost lock, learns before the next client is granted in every trial: its client gives up the connection after 2/3 of the session timeout, the server ends the session after the whole timeout.",
			Threshold: "holds when learn_first_margin_min ≥ 1 ms in every repetition (positive beyond clock resolution); fails when below in every repetition",
			Scenario:  "safety", Variant: "host-loss", Subject: "zookeeper", Metric: results.SafetyMetrics.LearnFirstMarginMin.Name,
			Op: results.AtLeast, Than: results.ClaimBound{Value: 1},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.SafetyMetrics.LearnFirstMarginP50.Name}, {Contender: "monolock"}, {Contender: "etcd"}},
		},
		{
			ID:        "zookeeper-fenced-no-stale-write",
			Claim:     "ZooKeeper Programmer's Guide, Time in ZooKeeper: \"Every change to the ZooKeeper state receives a stamp in the form of a zxid (ZooKeeper Transaction Id). This exposes the total ordering of all changes to ZooKeeper.\" A lock node's czxid is therefore a fencing token.",
			Statement: "Safety, pause (the holder frozen past its session timeout writes right after it resumes): the store fenced by czxid accepts no write from the old holder after the new holder's grant.",
			Threshold: "holds when unsafe_writes_fenced = 0 in every repetition; fails when it is above 0 in every repetition",
			Scenario:  "safety", Variant: "pause", Subject: "zookeeper", Metric: results.SafetyMetrics.UnsafeWritesFenced.Name,
			Op: results.AtMost, Than: results.ClaimBound{Value: 0},
			Spread: results.SpreadRange,
			Quote:  []results.ClaimQuote{{Metric: results.SafetyMetrics.UnsafeWritesUnfenced.Name}, {Metric: results.SafetyMetrics.FencedRejections.Name}},
		},
	}
}

// Notes are trade-offs of the recipe that a run does not measure.
func Notes() []string {
	return []string{
		"Availability: the ensemble grants while a majority of its members is up (3 survive one loss); a leader's loss costs an election, and the sessions of clients connected to a lost member survive only if they reconnect to another within the session timeout. monolock and the single-server locks stop granting while their server is down.",
		"Session: a lock belongs to a session, not to a connection; a holder whose connection is lost must treat the lock as lost at once (Curator's SUSPENDED) although the session, and so the lock, may live on for the session timeout. A crashed holder's lock is freed only when its session expires.",
		"Fencing: the lock node's czxid is a token the client must read (an extra request beside the create, pipelined here) and pass on itself; zxids keep increasing across leader changes.",
		"Operations: a JVM per member, 3 or 5 members on fast disks (each write is fsynced by a quorum), snapshot and log purging, and the session-timeout bounds (tickTime × 2 to × 20 by default) that limit how short a lease may be.",
	}
}
