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
	md := string(rep.Details) // the short lease is read in the appendix
	want := "idle-10k-lease2s: monolock 10,000 of 10,000 (server 630 ms/s, bench 700 ms/s), redlock 3,691 of 10,000"
	if !strings.Contains(md, want) {
		t.Errorf("report lacks %q", want)
	}
	if i := strings.Index(md, "Idle holders at the short lease"); i < 0 || strings.Contains(md[i:i+strings.Index(md[i:], "\n")], "idle-10k:") {
		t.Error("the short-lease reading is missing or names a long-lease variant")
	}
}

// The queue charts plot polling (commands other than keep-alives) apart
// from keep-alives, and every lock measured, a silent one at 0 too.
func TestScaleQueueChartsSeparatePolling(t *testing.T) {
	var figs []fig
	for _, q := range []struct {
		v                    string
		depth                float64
		redis, monolockAlive float64
	}{{"queue-1", 1, 7.2, 0.27}, {"queue-1k", 1000, 6584, 133}} {
		figs = append(figs,
			fig{"scale", "redis", q.v, "depth", "count", []float64{q.depth}},
			fig{"scale", "redis", q.v, "waiting_ops_per_sec", "1/s", []float64{q.redis}},
			fig{"scale", "redis", q.v, "heartbeats_per_sec", "1/s", []float64{0}},
			fig{"scale", "monolock", q.v, "depth", "count", []float64{q.depth}},
			fig{"scale", "monolock", q.v, "waiting_ops_per_sec", "1/s", []float64{0}},
			fig{"scale", "monolock", q.v, "heartbeats_per_sec", "1/s", []float64{q.monolockAlive}})
	}
	rep, err := Render(synthetic(figs, nil))
	if err != nil {
		t.Fatal(err)
	}
	svgs := map[string]string{}
	for _, c := range rep.Charts {
		svgs[c.Name] = string(c.SVG)
	}
	for _, name := range []string{"scale-queue-polling", "scale-queue-keepalives"} {
		svg, ok := svgs[name]
		if !ok {
			t.Fatalf("no chart %s", name)
		}
		for _, c := range []string{">monolock<", ">redis<"} {
			if !strings.Contains(svg, c) {
				t.Errorf("%s lacks %s (a lock at 0 is still measured)", name, c)
			}
		}
	}
	if !strings.Contains(svgs["scale-queue-polling"], "other than keep-alives") {
		t.Error("the polling chart does not say it leaves the keep-alives out")
	}
}
