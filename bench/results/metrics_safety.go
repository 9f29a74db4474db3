package results

// SafetyMetrics declares the safety scenario's figures, in the order a
// report shows them.
var SafetyMetrics = safetyMetrics{
	Trials:               MetricSpec{Name: "trials", Unit: "count", Label: "trials", Kind: KindParameter},
	NotGranted:           MetricSpec{Name: "not_granted", Unit: "count", Label: "trials where the second client was never granted", Kind: KindCount},
	NeverLearned:         MetricSpec{Name: "never_learned", Unit: "count", Better: BetterLower, Label: "trials where the old holder never learned it lost the lock", Kind: KindCount},
	DoubleGrants:         MetricSpec{Name: "double_grants", Unit: "count", Better: BetterLower, Label: "grants while the old holder still believed it held the lock", Kind: KindCount, Key: true},
	EarlyGrants:          MetricSpec{Name: "early_grants", Unit: "count", Better: BetterLower, Label: "trials with a second holder granted within half a lease of the freeze", Kind: KindCount},
	StrandedLocks:        MetricSpec{Name: "stranded_locks", Unit: "count", Better: BetterLower, Label: "pause trials whose lock the server still held when the stranded wait ran out, every client closed", Kind: KindCount},
	StrandedMs:           MetricSpec{Name: "stranded_ms", Unit: "ms", Better: BetterLower, Label: "longest a pause trial's lock stayed held on the server after every client closed (capped at the stranded wait)", Kind: KindLatency},
	UnsafeWritesUnfenced: MetricSpec{Name: "unsafe_writes_unfenced", Unit: "count", Better: BetterLower, Label: "stale writes accepted by the unfenced store", Kind: KindCount, Key: true},
	UnsafeWritesFenced:   MetricSpec{Name: "unsafe_writes_fenced", Unit: "count", Better: BetterLower, Label: "stale writes accepted by the fenced store", Kind: KindCount, Key: true},
	FencedRejections:     MetricSpec{Name: "fenced_rejections", Unit: "count", Label: "stale writes the fenced store rejected", Kind: KindCount},
	LearnFirstMarginP50:  MetricSpec{Name: "learn_first_margin_p50", Unit: "ms", Better: BetterHigher, Label: "learn-first margin p50", Kind: KindLatency, Key: true},
	LearnFirstMarginMin:  MetricSpec{Name: "learn_first_margin_min", Unit: "ms", Better: BetterHigher, Label: "smallest learn-first margin", Kind: KindLatency, Key: true},
	ProxyOverheadP50:     MetricSpec{Name: "proxy_overhead_p50", Unit: "us", Label: "what one fault-proxy link adds to a round trip (p50)", Kind: KindParameter},
}

type safetyMetrics struct {
	Trials               MetricSpec
	NotGranted           MetricSpec
	NeverLearned         MetricSpec
	DoubleGrants         MetricSpec
	EarlyGrants          MetricSpec
	StrandedLocks        MetricSpec
	StrandedMs           MetricSpec
	UnsafeWritesUnfenced MetricSpec
	UnsafeWritesFenced   MetricSpec
	FencedRejections     MetricSpec
	LearnFirstMarginP50  MetricSpec
	LearnFirstMarginMin  MetricSpec
	ProxyOverheadP50     MetricSpec
}

// List returns the safety scenario's metrics in declaration order.
func (m safetyMetrics) List() []MetricSpec { return specsOf(m) }
