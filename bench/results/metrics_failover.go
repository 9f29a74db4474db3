package results

// FailoverMetrics declares the failover scenario's figures, in the order a
// report shows them.
var FailoverMetrics = failoverMetrics{
	UnavailableMs:           MetricSpec{Name: "unavailable_ms", Unit: "ms", Better: BetterLower, Label: "longest stretch without a grant", Kind: KindLatency, Key: true},
	ZeroGrantMs:             MetricSpec{Name: "zero_grant_ms", Unit: "ms", Better: BetterLower, Label: "time in empty 100-ms buckets after the fault", Kind: KindLatency},
	RecoveryMs:              MetricSpec{Name: "recovery_ms", Unit: "ms", Better: BetterLower, Label: "recovery after the restart began (a standby pair: after the address moved)", Kind: KindLatency, Key: true},
	FailedAttempts:          MetricSpec{Name: "failed_attempts", Unit: "count", Better: BetterLower, Label: "failed attempts", Kind: KindCount, Key: true},
	LostHolders:             MetricSpec{Name: "lost_holders", Unit: "count", Better: BetterLower, Label: "holders that lost their lock", Kind: KindCount},
	DoubleGrants:            MetricSpec{Name: "double_grants", Unit: "count", Better: BetterLower, Label: "double grants", Kind: KindCount, Key: true},
	UnsafeWrites:            MetricSpec{Name: "unsafe_writes", Unit: "count", Better: BetterLower, Label: "stale writes accepted", Kind: KindCount},
	AcquireP99DuringFault:   MetricSpec{Name: "acquire_p99_during_fault", Unit: "us", Better: BetterLower, Label: "acquire p99 during the fault", Kind: KindLatency},
	ReleaseP99DuringFault:   MetricSpec{Name: "release_p99_during_fault", Unit: "ms", Better: BetterLower, Label: "release p99 during the fault", Kind: KindLatency},
	GrantRateRatio:          MetricSpec{Name: "grant_rate_ratio", Unit: "ratio", Better: BetterHigher, Label: "grant rate while the servers were down (the fault to the restart or the move) / before", Kind: KindRatio},
	GrantRateAfterRatio:     MetricSpec{Name: "grant_rate_after_ratio", Unit: "ratio", Better: BetterHigher, Label: "grant rate after the restart returned (a standby pair: after the move) / before", Kind: KindRatio},
	TokensMonotonic:         MetricSpec{Name: "tokens_monotonic", Unit: "bool", Better: BetterHigher, Label: "tokens after the fault exceed all before", Kind: KindVerdict, Key: true},
	GrantsWhileDown:         MetricSpec{Name: "grants_while_down", Unit: "count", Label: "grants while the servers were down", Kind: KindCount},
	LostAfterMs:             MetricSpec{Name: "lost_after_ms", Unit: "ms", Label: "time from the fault until holders learned of the loss", Kind: KindLatency},
	RestartMs:               MetricSpec{Name: "restart_ms", Unit: "ms", Label: "time the restart took", Kind: KindParameter},
	TokenGap:                MetricSpec{Name: "token_gap", Unit: "count", Label: "gap between the last token before and the first after", Kind: KindCount},
	BGranted:                MetricSpec{Name: "b_granted", Unit: "count", Label: "trials where the second client was granted", Kind: KindCount},
	DetectionMs:             MetricSpec{Name: "detection_ms", Unit: "ms", Better: BetterLower, Label: "D: detection and switch, from the fault in effect to the move", Kind: KindLatency, Key: true},
	FaultPhaseMs:            MetricSpec{Name: "fault_phase_ms", Unit: "ms", Label: "the fault's phase: from the start of the watcher's last check to the fault in effect", Kind: KindParameter},
	FaultTookMs:             MetricSpec{Name: "fault_took_ms", Unit: "ms", Label: "time the fault took to make (a link cut is a call to the delay line): D runs from its end", Kind: KindParameter},
	GapOverD:                MetricSpec{Name: "gap_over_d", Unit: "ratio", Better: BetterLower, Label: "longest stretch without a grant / D", Kind: KindRatio},
	HolderStopMs:            MetricSpec{Name: "holder_stop_ms", Unit: "ms", Label: "time from the fault in effect until the long holder learned it lost the lock (its own 0.8 × lease timer, or the reset the move caused, whichever came first)", Kind: KindLatency},
	HolderStopLimitMs:       MetricSpec{Name: "holder_stop_limit_ms", Unit: "ms", Label: "0.8 × lease: the latest a silent holder stops", Kind: KindParameter},
	UnsafeWritesFenced:      MetricSpec{Name: "unsafe_writes_fenced", Unit: "count", Better: BetterLower, Label: "stale writes the fenced store accepted", Kind: KindCount, Key: true},
	UnsafeWritesUnfenced:    MetricSpec{Name: "unsafe_writes_unfenced", Unit: "count", Better: BetterLower, Label: "stale writes the unfenced store accepted", Kind: KindCount},
	FencedRejections:        MetricSpec{Name: "fenced_rejections", Unit: "count", Label: "writes the fenced store rejected for a stale token", Kind: KindCount},
	OwnerWritesRejected:     MetricSpec{Name: "owner_writes_rejected", Unit: "count", Better: BetterLower, Label: "writes of the current owner the fenced store rejected (its token below an earlier owner's: the tokens went backwards)", Kind: KindCount},
	TakeoverMs:              MetricSpec{Name: "takeover_ms", Unit: "ms", Label: "from the primary's last grant before the fault to the standby's first grant", Kind: KindLatency},
	TokensPromiseBroken:     MetricSpec{Name: "tokens_promise_broken", Unit: "count", Better: BetterLower, Label: "backward tokens where the promise applies (the standby took over more than a second after the primary's last grant; 1 = a token after the move at or below one before)", Kind: KindCount},
	GrantsDialledBeforeMove: MetricSpec{Name: "grants_dialled_before_move", Unit: "count", Label: "grants after the move of acquires dialled before it (no-fence: the old primary's, but for dials that raced the move)", Kind: KindCount},
	GrantsDialledAfterMove:  MetricSpec{Name: "grants_dialled_after_move", Unit: "count", Label: "grants of acquires dialled after the move (the standby's)", Kind: KindCount},
}

type failoverMetrics struct {
	UnavailableMs           MetricSpec
	ZeroGrantMs             MetricSpec
	RecoveryMs              MetricSpec
	FailedAttempts          MetricSpec
	LostHolders             MetricSpec
	DoubleGrants            MetricSpec
	UnsafeWrites            MetricSpec
	AcquireP99DuringFault   MetricSpec
	ReleaseP99DuringFault   MetricSpec
	GrantRateRatio          MetricSpec
	GrantRateAfterRatio     MetricSpec
	TokensMonotonic         MetricSpec
	GrantsWhileDown         MetricSpec
	LostAfterMs             MetricSpec
	RestartMs               MetricSpec
	TokenGap                MetricSpec
	BGranted                MetricSpec
	DetectionMs             MetricSpec
	FaultPhaseMs            MetricSpec
	FaultTookMs             MetricSpec
	GapOverD                MetricSpec
	HolderStopMs            MetricSpec
	HolderStopLimitMs       MetricSpec
	UnsafeWritesFenced      MetricSpec
	UnsafeWritesUnfenced    MetricSpec
	FencedRejections        MetricSpec
	OwnerWritesRejected     MetricSpec
	TakeoverMs              MetricSpec
	TokensPromiseBroken     MetricSpec
	GrantsDialledBeforeMove MetricSpec
	GrantsDialledAfterMove  MetricSpec
}

// List returns the failover scenario's metrics in declaration order.
func (m failoverMetrics) List() []MetricSpec { return specsOf(m) }
