package workload

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// thresholdMetrics are the figures of the workload scenario a threshold
// can name (shared/spec/bench.md). A descriptor's Kind says how a
// threshold's value is written: a Go duration (latency), a number per
// second (rate), a count or a % of the requests (count), ms per 1,000
// locks as a number or a duration (CPU); slo_pass (verdict) is the
// thresholds' own verdict.
var thresholdMetrics = []results.MetricSpec{
	results.WorkloadMetrics.OfferedPerSec,
	results.WorkloadMetrics.AchievedPerSec,
	results.WorkloadMetrics.AcquireP50,
	results.WorkloadMetrics.AcquireP99,
	results.WorkloadMetrics.AcquireP999,
	results.WorkloadMetrics.WaitP99,
	results.WorkloadMetrics.Failures,
	results.WorkloadMetrics.ServerCPUMsPer1k,
	results.WorkloadMetrics.SLOPass,
}

func metricNames() []string {
	names := make([]string, len(thresholdMetrics))
	for i, m := range thresholdMetrics {
		names[i] = m.Name
	}
	return names
}

func lookupMetric(name string) (results.MetricSpec, bool) {
	for _, m := range thresholdMetrics {
		if m.Name == name {
			return m, true
		}
	}
	return results.MetricSpec{}, false
}

// Names of the values Threshold.Check reads beside the metrics: the
// denominators of the percentage forms.
const (
	// ValueRequests is the number of acquisitions attempted in the
	// measured window (granted, failed and never started).
	ValueRequests = "requests"
)

// NoRequest is why a verdict of a run without a measured request is not
// known.
const NoRequest = "no measured request in the window"

// Threshold is one SLO of a workload, k6-style: "acquire_p99 < 20ms".
type Threshold struct {
	// Text is the threshold as written.
	Text string
	// Metric is a name of thresholdMetrics; Op one of <, <=, >, >=, ==.
	Metric, Op string
	// Limit is in the metric's results unit (us, ms, 1/s, count), or a
	// ratio (0..1) when Relative.
	Limit float64
	// Relative: failures as a share of the requests, or achieved_per_sec
	// as a share of offered_per_sec.
	Relative bool

	line, col int
}

// Verdict is a threshold checked against one run.
type Verdict struct {
	Threshold Threshold
	// Value is the measured value in the threshold's terms (the metric's
	// unit, or a ratio when Relative); meaningful when Known.
	Value float64
	Known bool
	// Pass is whether the threshold held; false when not Known.
	Pass bool
	// Why says why a verdict is not Known ("server CPU not visible on
	// the external backend").
	Why string
}

// Check evaluates t on values, the run's figures by metric name in their
// results units (plus ValueRequests for a relative failures threshold).
// A figure that is missing gives a verdict that is not Known: a figure is
// never guessed. Nor is a run with no measured request (ValueRequests
// 0) judged: its counts are 0 because nothing was asked, so "failures ==
// 0" would pass on nothing.
func (t Threshold) Check(values map[string]float64) Verdict {
	v := Verdict{Threshold: t}
	if n, ok := values[ValueRequests]; ok && n == 0 {
		v.Why = NoRequest
		return v
	}
	x, ok := values[t.Metric]
	if !ok {
		v.Why = t.Metric + " was not measured"
		return v
	}
	if t.Relative {
		den := ValueRequests
		if t.Metric == results.WorkloadMetrics.AchievedPerSec.Name {
			den = results.WorkloadMetrics.OfferedPerSec.Name
		}
		d, ok := values[den]
		if !ok || d <= 0 {
			v.Why = den + " was not measured"
			return v
		}
		x /= d
	}
	v.Value, v.Known = x, true
	switch t.Op {
	case "<":
		v.Pass = x < t.Limit
	case "<=":
		v.Pass = x <= t.Limit
	case ">":
		v.Pass = x > t.Limit
	case ">=":
		v.Pass = x >= t.Limit
	case "==":
		v.Pass = x == t.Limit
	}
	return v
}

// String is the threshold as written.
func (t Threshold) String() string { return t.Text }

// describe says t in words: "acquire p99 from the intended start below 20ms".
func (t Threshold) describe() string {
	m, _ := lookupMetric(t.Metric)
	words := map[string]string{"<": "below", "<=": "at most", ">": "above", ">=": "at least", "==": "exactly"}[t.Op]
	var limit string
	switch {
	case t.Relative && t.Metric == results.WorkloadMetrics.AchievedPerSec.Name:
		limit = percent(t.Limit) + " of the offered rate"
	case t.Relative:
		limit = percent(t.Limit) + " of the requests"
	case m.Kind == results.KindLatency && m.Unit == "us":
		limit = fmtDuration(time.Duration(t.Limit * 1e3))
	case m.Kind == results.KindLatency || m.Kind == results.KindCPU:
		limit = fmtDuration(time.Duration(t.Limit * 1e6))
	case m.Kind == results.KindRate:
		limit = fmtRate(t.Limit)
	default:
		limit = strconv.FormatFloat(t.Limit, 'f', -1, 64)
	}
	return m.Label + " " + words + " " + limit
}

var thresholdSyntax = regexp.MustCompile(`^\s*([A-Za-z0-9_.()]+)\s*(<=|>=|==|!=|=|<|>)\s*(.*?)\s*$`)

// parseThreshold parses one threshold; on error it returns the message
// and the byte offset in text that it is about.
func parseThreshold(text string, loop Loop) (Threshold, int, string) {
	t := Threshold{Text: strings.TrimSpace(text)}
	m := thresholdSyntax.FindStringSubmatchIndex(text)
	if m == nil {
		return t, 0, fmt.Sprintf("threshold %q: want METRIC OP VALUE, e.g. \"acquire_p99 < 20ms\" (operators <, <=, >, >=, ==; metrics %s)",
			t.Text, strings.Join(metricNames(), ", "))
	}
	name, op, val := text[m[2]:m[3]], text[m[4]:m[5]], text[m[6]:m[7]]
	nameAt, opAt, valAt := m[2], m[4], m[6]
	spec, ok := lookupMetric(name)
	switch {
	case !ok:
		return t, nameAt, fmt.Sprintf("unknown metric %q%s (metrics: %s)", name, didYouMean(name, metricNames()), strings.Join(metricNames(), ", "))
	case spec.Kind == results.KindVerdict:
		return t, nameAt, "slo_pass is the verdict of the thresholds themselves and cannot be one"
	case spec.Name == results.WorkloadMetrics.OfferedPerSec.Name && loop == Closed:
		return t, nameAt, "offered_per_sec: a closed loop offers what it achieves; state achieved_per_sec"
	case op == "=" || op == "!=":
		return t, opAt, fmt.Sprintf("operator %s is not supported: use <, <=, >, >= (or == for failures)", op)
	case op == "==" && spec.Kind != results.KindCount:
		return t, opAt, fmt.Sprintf("%s == ...: == compares counts only (failures == 0); use <, <=, > or >=", name)
	case val == "":
		return t, opAt, fmt.Sprintf("threshold %q has no value after %s", t.Text, op)
	}
	t.Metric, t.Op = name, op
	limit, relative, msg := parseLimit(spec, val, loop)
	if msg != "" {
		return t, valAt, msg
	}
	t.Limit, t.Relative = limit, relative
	return t, 0, ""
}

// parseLimit reads a threshold's value for metric spec.
func parseLimit(spec results.MetricSpec, val string, loop Loop) (float64, bool, string) {
	name := spec.Name
	switch spec.Kind {
	case results.KindLatency:
		d, err := time.ParseDuration(val)
		if err != nil || d < 0 {
			return 0, false, fmt.Sprintf("%s: %q is not a duration: give a Go duration such as 20ms or 1.5s", name, val)
		}
		if spec.Unit == "us" {
			return float64(d) / 1e3, false, ""
		}
		return float64(d) / 1e6, false, ""
	case results.KindCPU:
		if f, err := strconv.ParseFloat(val, 64); err == nil && f >= 0 && !math.IsInf(f, 0) {
			return f, false, "" // the name says ms
		}
		d, err := time.ParseDuration(val)
		if err != nil || d < 0 {
			return 0, false, fmt.Sprintf("%s: %q is neither a number of milliseconds nor a duration (50 or 50ms)", name, val)
		}
		return float64(d) / 1e6, false, ""
	case results.KindRate:
		if strings.HasSuffix(val, "%") {
			if name != results.WorkloadMetrics.AchievedPerSec.Name || loop == Closed {
				return 0, false, fmt.Sprintf("%s: a percentage is a share of the offered rate, which only achieved_per_sec of an open loop has; give a rate (290 or 290/s)", name)
			}
			f, ok := parsePercent(val)
			if !ok || f <= 0 || f > 1 {
				return 0, false, fmt.Sprintf("%s: %q is not a percentage between 0%% and 100%%", name, val)
			}
			return f, true, ""
		}
		r, ok := parseRate(val)
		if !ok {
			return 0, false, fmt.Sprintf("%s: %q is not a rate: give a number per second (290), or 290/s, 20/min, 5/h", name, val)
		}
		return r, false, ""
	case results.KindCount:
		if strings.HasSuffix(val, "%") {
			f, ok := parsePercent(val)
			if !ok || f < 0 || f > 1 {
				return 0, false, fmt.Sprintf("%s: %q is not a percentage between 0%% and 100%%", name, val)
			}
			return f, true, ""
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < 0 {
			return 0, false, fmt.Sprintf("%s: %q is neither a count (0, 5) nor a share of the requests (0.1%%)", name, val)
		}
		return float64(n), false, ""
	}
	return 0, false, name + ": cannot be a threshold"
}

// parsePercent reads "0.1%" as 0.001.
func parsePercent(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f / 100, true
}

// parseRate reads a positive rate: "300", "300/s", "20/min", "5/h".
func parseRate(s string) (float64, bool) {
	num, per := s, 1.0
	if i := strings.IndexByte(s, '/'); i >= 0 {
		num = strings.TrimSpace(s[:i])
		switch strings.TrimSpace(s[i+1:]) {
		case "s":
		case "min":
			per = 60
		case "h":
			per = 3600
		default:
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return 0, false
	}
	return f / per, true
}
