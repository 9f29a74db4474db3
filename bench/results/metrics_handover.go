package results

// HandoverMetrics declares the handover scenario's figures, in the order a
// report shows them.
var HandoverMetrics = handoverMetrics{
	P50:    MetricSpec{Name: "p50", Unit: "ms", Better: BetterLower, Label: "handover p50", Kind: KindLatency, Key: true},
	P95:    MetricSpec{Name: "p95", Unit: "ms", Better: BetterLower, Label: "handover p95", Kind: KindLatency},
	Max:    MetricSpec{Name: "max", Unit: "ms", Better: BetterLower, Label: "slowest handover", Kind: KindLatency, Key: true},
	Failed: MetricSpec{Name: "failed", Unit: "count", Better: BetterLower, Label: "failed trials", Kind: KindCount, Key: true},
}

type handoverMetrics struct {
	P50    MetricSpec
	P95    MetricSpec
	Max    MetricSpec
	Failed MetricSpec
}

// List returns the handover scenario's metrics in declaration order.
func (m handoverMetrics) List() []MetricSpec { return specsOf(m) }
