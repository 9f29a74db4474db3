package results

// ChaosMetrics declares the chaos scenario's figures, in the order a
// report shows them.
var ChaosMetrics = chaosMetrics{
	Faults:                      MetricSpec{Name: "faults", Unit: "count", Label: "faults applied", Kind: KindParameter, Key: true},
	Operations:                  MetricSpec{Name: "operations", Unit: "count", Label: "operations recorded", Kind: KindParameter},
	DoubleHolders:               MetricSpec{Name: "double_holders", Unit: "count", Better: BetterLower, Label: "overlapping holds (two clients believed they held the lock)", Kind: KindCount, Key: true},
	DoubleHoldersRunning:        MetricSpec{Name: "double_holders_running", Unit: "count", Better: BetterLower, Label: "overlapping holds whose earlier holder was running (not frozen by a pause through the overlap)", Kind: KindCount, Key: true},
	DoubleHolderMs:              MetricSpec{Name: "double_holder_ms", Unit: "ms", Better: BetterLower, Label: "total time of overlapping holds", Kind: KindLatency},
	OverlapsServerEarly:         MetricSpec{Name: "overlaps_server_early", Unit: "count", Better: BetterLower, Label: "running overlaps the servers' own record lays on the server (granted before it ended the first hold, or expired a lease before its TTL ran out)", Kind: KindCount},
	OverlapsClientLate:          MetricSpec{Name: "overlaps_client_late", Unit: "count", Better: BetterLower, Label: "running overlaps the servers' own record lays on the client (the server ended the first hold on time; its holder learned after the next grant)", Kind: KindCount},
	OverlapsBoth:                MetricSpec{Name: "overlaps_server_and_client", Unit: "count", Better: BetterLower, Label: "running overlaps laid on both (a lease expired early, and its holder believed past its due time)", Kind: KindCount},
	OverlapsUnclassified:        MetricSpec{Name: "overlaps_unclassified", Unit: "count", Better: BetterLower, Label: "running overlaps no server record covers", Kind: KindCount},
	TokenOrderViolations:        MetricSpec{Name: "token_order_violations", Unit: "count", Better: BetterLower, Label: "grants whose token was not above that of a grant released before they were asked for", Kind: KindCount},
	StaleWritesFenced:           MetricSpec{Name: "stale_writes_fenced", Unit: "count", Better: BetterLower, Label: "stale writes accepted by the fenced store", Kind: KindCount, Key: true},
	StaleWritesUnfenced:         MetricSpec{Name: "stale_writes_unfenced", Unit: "count", Better: BetterLower, Label: "stale writes accepted by the unfenced store", Kind: KindCount, Key: true},
	HolderWritesRefusedFenced:   MetricSpec{Name: "holder_writes_refused_fenced", Unit: "count", Better: BetterLower, Label: "writes of the current holder refused by the fenced store", Kind: KindCount},
	WritesAfterLost:             MetricSpec{Name: "writes_after_lost", Unit: "count", Better: BetterLower, Label: "writes sent after the writer's own lost notice (both stores)", Kind: KindCount},
	LostUpdates:                 MetricSpec{Name: "lost_updates", Unit: "count", Better: BetterLower, Label: "acknowledged increments lost (both stores)", Kind: KindCount, Key: true},
	LostUpdatesFenced:           MetricSpec{Name: "lost_updates_fenced", Unit: "count", Better: BetterLower, Label: "acknowledged increments lost, fenced store", Kind: KindCount},
	LostUpdatesUnfenced:         MetricSpec{Name: "lost_updates_unfenced", Unit: "count", Better: BetterLower, Label: "acknowledged increments lost, unfenced store", Kind: KindCount},
	LinearizableFenced:          MetricSpec{Name: "linearizable_fenced", Unit: "bool", Better: BetterHigher, Label: "fenced register linearizable", Kind: KindVerdict, Key: true},
	LinearizableUnfenced:        MetricSpec{Name: "linearizable_unfenced", Unit: "bool", Better: BetterHigher, Label: "unfenced register linearizable", Kind: KindVerdict},
	ViolationRateHi:             MetricSpec{Name: "violation_rate_hi", Unit: "ratio", Better: BetterLower, Label: "violation rate, Wilson 95% upper bound (faults as trials)", Kind: KindRatio, Key: true},
	ViolationRateHiFenced:       MetricSpec{Name: "violation_rate_hi_fenced", Unit: "ratio", Better: BetterLower, Label: "violation rate upper bound, fenced store", Kind: KindRatio},
	ViolationRateHiUnfenced:     MetricSpec{Name: "violation_rate_hi_unfenced", Unit: "ratio", Better: BetterLower, Label: "violation rate upper bound, unfenced store", Kind: KindRatio},
	GrantGapMax:                 MetricSpec{Name: "grant_gap_max", Unit: "ms", Better: BetterLower, Label: "longest time without a grant", Kind: KindLatency},
	FaultsOnHolder:              MetricSpec{Name: "faults_on_holder", Unit: "count", Label: "client faults that struck the holder", Kind: KindCount},
	LockKeptThroughFault:        MetricSpec{Name: "lock_kept_through_fault", Unit: "count", Label: "holder faults through which no other client was granted", Kind: KindCount},
	StrandedLock:                MetricSpec{Name: "stranded_lock", Unit: "count", Better: BetterLower, Label: "the step's lock still held on the server when the stranded wait ran out, every client closed (1: held)", Kind: KindCount},
	StrandedMs:                  MetricSpec{Name: "stranded_ms", Unit: "ms", Better: BetterLower, Label: "how long the step's lock stayed held on the server after every client closed (capped at the stranded wait)", Kind: KindLatency},
	NoHandoverDuringHolderFault: MetricSpec{Name: "no_handover_during_holder_fault", Unit: "bool", Label: "no other client was granted the lock during any client fault on its holder (1: the checkers never saw a handover under a fault)", Kind: KindVerdict},
}

type chaosMetrics struct {
	Faults                      MetricSpec
	Operations                  MetricSpec
	DoubleHolders               MetricSpec
	DoubleHoldersRunning        MetricSpec
	DoubleHolderMs              MetricSpec
	OverlapsServerEarly         MetricSpec
	OverlapsClientLate          MetricSpec
	OverlapsBoth                MetricSpec
	OverlapsUnclassified        MetricSpec
	TokenOrderViolations        MetricSpec
	StaleWritesFenced           MetricSpec
	StaleWritesUnfenced         MetricSpec
	HolderWritesRefusedFenced   MetricSpec
	WritesAfterLost             MetricSpec
	LostUpdates                 MetricSpec
	LostUpdatesFenced           MetricSpec
	LostUpdatesUnfenced         MetricSpec
	LinearizableFenced          MetricSpec
	LinearizableUnfenced        MetricSpec
	ViolationRateHi             MetricSpec
	ViolationRateHiFenced       MetricSpec
	ViolationRateHiUnfenced     MetricSpec
	GrantGapMax                 MetricSpec
	FaultsOnHolder              MetricSpec
	LockKeptThroughFault        MetricSpec
	StrandedLock                MetricSpec
	StrandedMs                  MetricSpec
	NoHandoverDuringHolderFault MetricSpec
}

// List returns the chaos scenario's metrics in declaration order.
func (m chaosMetrics) List() []MetricSpec { return specsOf(m) }
