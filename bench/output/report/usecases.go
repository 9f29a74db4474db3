package report

// A useCase is one question the decision section answers, as data: the
// capabilities a lock must show in the run to be picked (ids of
// results.DecisionFigure with a threshold; a trailing "*" stands for every
// id with that prefix), the figures that rank the locks that qualify
// (the first orders them, inside its noise they tie; the others are
// shown), and the caveat a reader should weigh. The report prints the
// rule beside its pick, so a reader can disagree with it. No contender
// and no metric is named here: the scenarios declare the figures.
type useCase struct {
	title    string
	requires []string
	rank     []string
	caveat   string
}

var useCases = []useCase{
	{
		title:    "Correctness-critical jobs (cron, deploys, leader election): a stale write is damage",
		requires: []string{"fenced-store", "learns-first", "frozen-freed"},
		rank:     []string{"learn-first-margin", "handover-freeze"},
		caveat:   "Fencing protects only a resource that checks the token: with a resource that does not, a holder paused past its lease wrote after the next grant with every lock of this run that granted (safety pause, unfenced store).",
	},
	{
		title:  "Very many short locks (hold 0, many workers on distinct keys)",
		rank:   []string{"short-locks-rate", "short-locks-cpu"},
		caveat: "Measured on one machine whose cores the load generator shares with the servers; a lock's rate here is a lower bound of what a dedicated server gives.",
	},
	{
		title:    "One hot lock passed among many workers",
		requires: []string{"fifo", "waiters-no-poll"},
		rank:     []string{"handover-graceful", "hot-wait-p99", "hot-coordinator-load"},
		caveat:   "The coordinator load is that of the few clients of the fairness scenario; a polling lock's load grows with its waiters (Scale, queue).",
	},
	{
		title:    "Holders that may crash, freeze or lose their host",
		requires: []string{"frozen-freed", "host-loss-freed", "learns-first"},
		rank:     []string{"handover-crash", "handover-freeze"},
		caveat:   "After a freeze or a host loss the lock is free only once the lease expired: a shorter lease frees it sooner and costs more keep-alives.",
	},
	{
		title:    "The coordinator itself may fail",
		requires: []string{"granting-server-down", "restart-no-double-grant"},
		rank:     []string{"restart-unavailable", "recovery", "failover-detection"},
		caveat:   "A single coordinator cannot grant while it is down; a replicated one, or a standby pair once its failover has moved the address (after D), can, with more servers to run. A standby pair keeps its guarantees only while the failover fences the old primary.",
	},
	{
		title:    "Very many idle sessions (each holding a lock and keeping it alive)",
		requires: []string{"sessions-lease*"},
		rank:     []string{"server-bytes-per-session"},
		caveat:   "The session counts are capped by the open-file limits of this machine, and rest on one repetition.",
	},
}
