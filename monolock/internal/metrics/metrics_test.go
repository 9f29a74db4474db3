package metrics

import (
	"math"
	"strings"
	"testing"
)

func TestWriter(t *testing.T) {
	var sb strings.Builder
	w := NewWriter(&sb)
	var c Counter
	c.Inc()
	c.Inc()
	var s Summary
	s.Observe(0.5)
	s.Observe(1.25)
	sum, n := s.Value()
	w.Counter("x_total", "An x.", Sample{Label("reason", "a\"b\\c\nd"), float64(c.Value())}, Sample{Label("reason", "z"), 0})
	w.Gauge("g", "A g.", Sample{"", 1e20}, Sample{`k="inf"`, math.Inf(1)}, Sample{`k="f"`, 0.25})
	w.Summary("s_seconds", "An s.", sum, n)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `# HELP x_total An x.
# TYPE x_total counter
x_total{reason="a\"b\\c\nd"} 2
x_total{reason="z"} 0
# HELP g A g.
# TYPE g gauge
g 1e+20
g{k="inf"} +Inf
g{k="f"} 0.25
# HELP s_seconds An s.
# TYPE s_seconds summary
s_seconds_sum 1.75
s_seconds_count 2
`
	if got := sb.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
