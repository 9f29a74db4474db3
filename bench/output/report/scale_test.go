package report

import (
	"strings"
	"testing"
)

// The short-lease idle variants are read as sessions kept of those opened,
// beside what the keep-alives cost the server and the bench.
func TestScaleShortLeaseReading(t *testing.T) {
	v := "idle-10k-lease2s"
	r := synthetic([]fig{
		{"scale", "monolock", v, "sessions_reached", "count", []float64{10000}},
		{"scale", "monolock", v, "sessions", "count", []float64{10000}},
		{"scale", "monolock", v, "server_cpu_ms_per_sec", "ms/s", []float64{630}},
		{"scale", "monolock", v, "bench_cpu_ms_per_sec", "ms/s", []float64{700}},
		{"scale", "redlock", v, "sessions_reached", "count", []float64{3691}},
		{"scale", "redlock", v, "sessions", "count", []float64{10000}},
		{"scale", "redis", "idle-10k", "sessions_reached", "count", []float64{10000}},
		{"scale", "redis", "idle-10k", "sessions", "count", []float64{10000}},
	}, nil)
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	md := string(rep.Markdown)
	want := "idle-10k-lease2s: monolock 10000 of 10000 (server 630 ms/s, bench 700 ms/s), redlock 3691 of 10000"
	if !strings.Contains(md, want) {
		t.Errorf("report lacks %q", want)
	}
	if i := strings.Index(md, "Idle holders at the short lease"); i < 0 || strings.Contains(md[i:i+strings.Index(md[i:], "\n")], "idle-10k:") {
		t.Error("the short-lease reading is missing or names a long-lease variant")
	}
}
