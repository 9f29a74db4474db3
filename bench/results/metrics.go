package results

import (
	"reflect"
	"strings"
)

// Every scenario's figures are declared once, in the metrics_<scenario>.go
// files of this package: a struct of MetricSpec per scenario, whose fields
// the scenario records, the report, the claims and compare name, so that
// a metric's name, unit, direction and label are spelled in one place.

// Of returns a measured value of the metric, as a record carries it.
func (m MetricSpec) Of(v float64) Metric {
	return Metric{Name: m.Name, Unit: m.Unit, Value: v}
}

// specsOf lists the MetricSpec fields of a scenario's metrics struct in
// the order they are declared: the order a report shows them.
func specsOf(metrics any) []MetricSpec {
	v := reflect.ValueOf(metrics)
	specs := make([]MetricSpec, 0, v.NumField())
	for i := range v.NumField() {
		specs = append(specs, v.Field(i).Interface().(MetricSpec))
	}
	return specs
}

// FaultsUnder is the chaos figure that counts the faults of one kind of
// the nemesis ("client-pause") applied to a lock.
func (chaosMetrics) FaultsUnder(kind string) MetricSpec {
	return MetricSpec{Name: "faults_" + chaosKindName(kind), Unit: "count", Label: "faults applied: " + kind, Kind: KindCount}
}

// ViolationRateUnder is the chaos figure of the Wilson upper bound of the
// violation rate under one kind of fault.
func (chaosMetrics) ViolationRateUnder(kind string) MetricSpec {
	return MetricSpec{Name: "violation_rate_hi_" + chaosKindName(kind), Unit: "ratio", Better: BetterLower, Label: "violation rate upper bound under " + kind, Kind: KindRatio}
}

// chaosKindName writes a fault kind as part of a metric name:
// "client-pause" → "client_pause".
func chaosKindName(kind string) string { return strings.ReplaceAll(kind, "-", "_") }
