package workload

import (
	"testing"
)

func TestThresholdCheck(t *testing.T) {
	run := map[string]float64{
		"offered_per_sec": 300, "achieved_per_sec": 296, "acquire_p50": 180, "acquire_p99": 14_200, "acquire_p999": 61_000,
		"wait_p99": 35, "failures": 2, ValueRequests: 1200, "server_cpu_ms_per_1k": 41,
	}
	tests := []struct {
		text  string
		loop  Loop
		limit float64
		value float64
		pass  bool
		known bool
	}{
		{"acquire_p99 < 20ms", Open, 20_000, 14_200, true, true},
		{"acquire_p999 < 50ms", Open, 50_000, 61_000, false, true},
		{"acquire_p50 <= 180us", Open, 180, 180, true, true},
		{"wait_p99 < 30ms", Open, 30, 35, false, true},
		{"failures < 0.1%", Open, 0.001, 2.0 / 1200, false, true},
		{"failures < 1%", Open, 0.01, 2.0 / 1200, true, true},
		{"failures == 0", Open, 0, 2, false, true},
		{"failures <= 2", Open, 2, 2, true, true},
		{"achieved_per_sec >= 290", Open, 290, 296, true, true},
		{"achieved_per_sec >= 99%", Open, 0.99, 296.0 / 300, false, true},
		{"achieved_per_sec > 5/min", Closed, 5.0 / 60, 296, true, true},
		{"offered_per_sec > 299", Open, 299, 300, true, true},
		{"server_cpu_ms_per_1k < 50", Open, 50, 41, true, true},
		{"server_cpu_ms_per_1k < 40ms", Open, 40, 41, false, true},
	}
	for _, tt := range tests {
		th, _, msg := parseThreshold(tt.text, tt.loop)
		if msg != "" {
			t.Errorf("%q: %s", tt.text, msg)
			continue
		}
		if !within(th.Limit, tt.limit, 1e-12) {
			t.Errorf("%q: limit %v, want %v", tt.text, th.Limit, tt.limit)
		}
		v := th.Check(run)
		if v.Known != tt.known || v.Pass != tt.pass || !within(v.Value, tt.value, 1e-12) {
			t.Errorf("%q: %+v, want value %v pass %v", tt.text, v, tt.value, tt.pass)
		}
	}

	// A figure not measured (server CPU on an external backend) gives no
	// verdict rather than a guess.
	th, _, _ := parseThreshold("server_cpu_ms_per_1k < 50", Open)
	if v := th.Check(map[string]float64{"failures": 0}); v.Known || v.Pass || v.Why == "" {
		t.Errorf("missing figure: %+v", v)
	}
	th, _, _ = parseThreshold("failures < 1%", Open)
	if v := th.Check(map[string]float64{"failures": 0}); v.Known || v.Why != "requests was not measured" {
		t.Errorf("missing denominator: %+v", v)
	}

	// A run whose window measured no request (a queue longer than the
	// run) judges nothing: 0 failures of 0 requests is not a pass.
	none := map[string]float64{ValueRequests: 0, "failures": 0, "achieved_per_sec": 1, "offered_per_sec": 0, "server_cpu_ms_per_1k": 9}
	for _, text := range []string{"failures == 0", "failures < 0.1%", "achieved_per_sec >= 0.5", "server_cpu_ms_per_1k < 50"} {
		th, _, msg := parseThreshold(text, Closed)
		if msg != "" {
			t.Fatal(msg)
		}
		if v := th.Check(none); v.Known || v.Pass || v.Why != NoRequest {
			t.Errorf("%q on no request: %+v, want not known: %s", text, v, NoRequest)
		}
	}
}

func TestThresholdDescribe(t *testing.T) {
	for text, want := range map[string]string{
		"acquire_p99 < 20ms":          "acquire p99 from the intended start below 20ms",
		"wait_p99 <= 1.5s":            "wait p99 on contended keys at most 1.5s",
		"failures < 0.1%":             "failed and timed-out acquisitions below 0.1% of the requests",
		"failures == 0":               "failed and timed-out acquisitions exactly 0",
		"achieved_per_sec >= 99%":     "achieved rate at least 99% of the offered rate",
		"achieved_per_sec > 290":      "achieved rate above 290/s",
		"server_cpu_ms_per_1k < 50ms": "coordinator CPU per 1,000 locks below 50ms",
	} {
		th, _, msg := parseThreshold(text, Open)
		if msg != "" {
			t.Fatal(msg)
		}
		if got := th.describe(); got != want {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}

func TestMetricsDeclareTheSpec(t *testing.T) {
	// shared/spec/bench.md, the workload row of the metric table.
	want := map[string]string{
		"offered_per_sec": "1/s", "achieved_per_sec": "1/s", "acquire_p50": "us", "acquire_p99": "us", "acquire_p999": "us",
		"wait_p99": "ms", "failures": "count", "server_cpu_ms_per_1k": "ms", "slo_pass": "bool",
	}
	ms := thresholdMetrics
	if len(ms) != len(want) {
		t.Errorf("%d metrics, want %d", len(ms), len(want))
	}
	for _, m := range ms {
		if want[m.Name] != m.Unit {
			t.Errorf("%s: unit %q, want %q", m.Name, m.Unit, want[m.Name])
		}
	}
}
