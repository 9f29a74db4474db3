package report

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench/results"
)

// partialRun builds a valid results file from a fixture run by keeping
// only the raw records keep accepts (test data, not a measurement).
func partialRun(t testing.TB, keep func(results.Raw) bool) *results.Results {
	t.Helper()
	r := fixture(t)
	var raw []results.Raw
	for _, x := range r.Raw {
		if keep(x) {
			raw = append(raw, x)
		}
	}
	r.Raw, r.Summary = raw, withBetter(results.Summarize(raw))
	return r
}

// Any results file that validates renders: interrupted runs, a single
// contender or repetition, zeros, missing scenarios, no claim rules.
func TestRenderPartialData(t *testing.T) {
	tests := []struct {
		name   string
		build  func(t *testing.T) *results.Results
		charts bool // at least one chart expected
	}{
		// The gonum log-scale panic of issue 12: one worker count only.
		{"interrupted during throughput distinct-w4", func(t *testing.T) *results.Results {
			r := partialRun(t, func(x results.Raw) bool { return x.Scenario == "latency" || x.Variant == "distinct-w1" })
			r.Partial, r.PartialReason = true, "interrupted during throughput distinct-w4"
			return r
		}, true},
		{"distinct-w4 for one contender and repetition", func(t *testing.T) *results.Results {
			return partialRun(t, func(x results.Raw) bool {
				return x.Variant == "distinct-w1" || (x.Variant == "distinct-w4" && x.Contender == "monolock" && x.Repetition == 1)
			})
		}, true},
		{"one contender", func(t *testing.T) *results.Results {
			return partialRun(t, func(x results.Raw) bool { return x.Contender == "etcd" })
		}, true},
		{"one floor only", func(t *testing.T) *results.Results {
			return partialRun(t, func(x results.Raw) bool { return x.Contender == "tcp-floor" })
		}, true},
		{"one repetition", func(t *testing.T) *results.Results {
			r := partialRun(t, func(x results.Raw) bool { return x.Repetition == 1 })
			r.Parameters.Repetitions = 1
			return r
		}, true},
		{"zeros everywhere", func(t *testing.T) *results.Results {
			r := fixture(t)
			for i := range r.Raw {
				for j := range r.Raw[i].Metrics {
					r.Raw[i].Metrics[j].Value = 0
				}
			}
			r.Summary = withBetter(results.Summarize(r.Raw))
			return r
		}, true},
		{"constant histograms", func(t *testing.T) *results.Results {
			r := partialRun(t, func(x results.Raw) bool { return x.Scenario == "latency" || x.Scenario == "fairness" })
			for i := range r.Raw {
				for j, h := range r.Raw[i].Histograms {
					r.Raw[i].Histograms[j] = constantHistogram(t, h.Name, 1, 0)
				}
			}
			return r
		}, true},
		{"missing scenario", func(t *testing.T) *results.Results {
			r := partialRun(t, func(x results.Raw) bool { return x.Scenario != "handover" })
			r.Parameters.Scenarios = append(r.Parameters.Scenarios, "safety")
			return r
		}, true},
		{"no claim rules, no contender info, no settings", func(t *testing.T) *results.Results {
			r := fixture(t)
			r.Claims, r.Contenders, r.Parameters.Contender = nil, nil, nil
			return r
		}, true},
		{"nothing ran", func(t *testing.T) *results.Results {
			r := partialRun(t, func(results.Raw) bool { return false })
			r.Partial, r.PartialReason = true, "interrupted before the first step"
			return r
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.build(t)
			if err := r.Validate(); err != nil {
				t.Fatalf("test data does not validate: %v", err)
			}
			rep, err := Render(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Markdown) == 0 || len(rep.HTML) == 0 {
				t.Fatal("empty report")
			}
			if tt.charts != (len(rep.Charts) > 0) {
				t.Errorf("%d charts, want charts: %v", len(rep.Charts), tt.charts)
			}
		})
	}
}

// constantHistogram records n copies of one value (ns).
func constantHistogram(t testing.TB, name string, n int, v int64) results.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, int64(10*time.Minute), 3)
	for range n {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := results.NewHistogram(name, "ns", h)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// fuzzShape lists what a fuzzed run may contain: each scenario's variants
// and metrics (with the spec's units).
var fuzzShape = []struct {
	scenario string
	variants []string
	metrics  []results.Metric
	hist     string
}{
	{"latency", []string{"w1", "w8"}, []results.Metric{{Name: "acquire_p50", Unit: "us"}, {Name: "acquire_p999", Unit: "us"}, {Name: "cycle_p50", Unit: "us"}}, "acquire"},
	{"throughput", []string{"distinct-w1", "distinct-w4", "distinct-w64", "shared-w16", "odd"}, []results.Metric{{Name: "cycles_per_sec", Unit: "1/s"}, {Name: "server_cpu_ms_per_1k", Unit: "ms"}}, ""},
	{"handover", []string{"graceful", "crash", "freeze"}, []results.Metric{{Name: "p50", Unit: "ms"}, {Name: "max", Unit: "ms"}, {Name: "failed", Unit: "count"}}, ""},
	{"fairness", []string{"n8"}, []results.Metric{{Name: "jain_index", Unit: "ratio"}, {Name: "server_ops_per_sec", Unit: "1/s"}, {Name: "grants", Unit: "count"}, {Name: "fifo_inversions_per_1k", Unit: "count"}}, "wait"},
	{"scale", []string{"idle-1k"}, []results.Metric{{Name: "sessions_reached", Unit: "count"}}, ""},
}

// fuzzRun decodes bytes into a results file: every 6 bytes are one
// repetition of one scenario variant for one contender, with values that
// include zeros, tiny and huge numbers, and sometimes a histogram or
// per-client grants. Contender info, claim rules and floors come from the
// fixture, so the claims are evaluated on the fuzzed figures.
func fuzzRun(t testing.TB, base *results.Results, data []byte) *results.Results {
	r := &results.Results{
		SchemaVersion: results.SchemaVersion, RunID: "fuzz", StartedAt: base.StartedAt,
		Environment: base.Environment, Contenders: base.Contenders, Claims: base.Claims,
		Parameters: results.Parameters{Repetitions: 3, Scenarios: []string{"latency", "throughput", "handover", "fairness"},
			Contenders: base.Parameters.Contenders, Contender: base.Parameters.Contender},
	}
	seen := map[string]bool{}
	for ; len(data) >= 6; data = data[6:] {
		shape := fuzzShape[int(data[0])%len(fuzzShape)]
		contender := r.Parameters.Contenders[int(data[1])%len(r.Parameters.Contenders)]
		x := results.Raw{
			Scenario: shape.scenario, Contender: contender,
			Variant:    shape.variants[int(data[2])%len(shape.variants)],
			Repetition: 1 + int(data[3])%3, StartedAt: r.StartedAt, Seconds: float64(data[3] % 4),
		}
		k := fmt.Sprint(x.Scenario, x.Contender, x.Variant, x.Repetition)
		if seen[k] {
			continue
		}
		seen[k] = true
		v := float64(binary.BigEndian.Uint16(data[4:6]))
		for i, m := range shape.metrics {
			switch (int(data[4]) + i) % 4 {
			case 0:
				m.Value = 0
			case 1:
				m.Value = v / 1000
			case 2:
				m.Value = v
			default:
				m.Value = v * 1e6
			}
			x.Metrics = append(x.Metrics, m)
		}
		if shape.hist != "" && data[5]%2 == 0 {
			x.Histograms = append(x.Histograms, constantHistogram(t, shape.hist, int(data[5]%5), int64(v)))
		}
		if shape.scenario == "fairness" && data[5]%3 == 0 {
			x.Clients = []results.Client{{ID: "c0", Counts: map[string]int64{"grants": int64(data[4])}}}
		}
		r.Raw = append(r.Raw, x)
	}
	r.Summary = results.Summarize(r.Raw)
	return r
}

func FuzzRender(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 0})                   // one throughput figure at 1 worker, zeros
	f.Add([]byte{1, 0, 1, 0, 1, 0, 1, 3, 1, 1, 0, 5}) // distinct-w4 for two contenders
	f.Add([]byte{0, 0, 0, 0, 7, 2, 0, 5, 0, 1, 9, 4, 3, 0, 0, 2, 0, 0})
	f.Add([]byte{2, 0, 1, 0, 255, 255, 2, 1, 1, 0, 0, 0, 3, 0, 0, 1, 3, 3})
	base := fixture(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fuzzRun(t, base, data)
		if err := r.Validate(); err != nil {
			t.Skip(err)
		}
		if _, err := Render(r); err != nil {
			t.Fatal(err)
		}
	})
}
