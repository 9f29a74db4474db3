// Package metrics writes the Prometheus text exposition format (version
// 0.0.4) by hand, with the standard library only, and holds the two metric
// kinds the server keeps itself: counters and summaries without quantiles.
package metrics

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
)

// Counter is a monotonically increasing count. The zero value is ready;
// safe for concurrent use.
type Counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Value returns the count.
func (c *Counter) Value() uint64 { return c.n.Load() }

// Summary accumulates the sum and count of observations (a Prometheus
// summary without quantiles). The zero value is ready; safe for concurrent
// use.
type Summary struct {
	mu    sync.Mutex
	sum   float64
	count uint64
}

// Observe adds one observation.
func (s *Summary) Observe(v float64) {
	s.mu.Lock()
	s.sum += v
	s.count++
	s.mu.Unlock()
}

// Value returns the sum and count of the observations so far.
func (s *Summary) Value() (sum float64, count uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sum, s.count
}

// Sample is one line of a family: a label set, already formatted without
// braces (`reason="graceful"`, or "" for none), and a value.
type Sample struct {
	Labels string
	Value  float64
}

// Writer writes metric families. The first write error is kept and
// returned by Flush; later writes do nothing. Not safe for concurrent use.
type Writer struct {
	w   *bufio.Writer
	err error
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// Counter writes a counter family.
func (w *Writer) Counter(name, help string, samples ...Sample) {
	w.family(name, help, "counter", samples)
}

// Gauge writes a gauge family.
func (w *Writer) Gauge(name, help string, samples ...Sample) {
	w.family(name, help, "gauge", samples)
}

// Summary writes a summary family with only _sum and _count.
func (w *Writer) Summary(name, help string, sum float64, count uint64) {
	w.header(name, help, "summary")
	w.line(name+"_sum", "", sum)
	w.line(name+"_count", "", float64(count))
}

// Flush writes out what is buffered and returns the first error.
func (w *Writer) Flush() error {
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

func (w *Writer) family(name, help, kind string, samples []Sample) {
	w.header(name, help, kind)
	for _, s := range samples {
		w.line(name, s.Labels, s.Value)
	}
}

func (w *Writer) header(name, help, kind string) {
	w.write("# HELP " + name + " " + help + "\n# TYPE " + name + " " + kind + "\n")
}

func (w *Writer) line(name, labels string, v float64) {
	b := make([]byte, 0, 64)
	b = append(b, name...)
	if labels != "" {
		b = append(b, '{')
		b = append(b, labels...)
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendValue(b, v)
	b = append(b, '\n')
	w.write(string(b))
}

func (w *Writer) write(s string) {
	if w.err == nil {
		_, w.err = w.w.WriteString(s)
	}
}

// appendValue formats v as Prometheus expects: integers without exponent,
// +Inf/-Inf/NaN spelled out.
func appendValue(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case v == math.Trunc(v) && math.Abs(v) < 1<<53:
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// Label formats one label pair for Sample.Labels, escaping the value.
func Label(name, value string) string {
	b := make([]byte, 0, len(name)+len(value)+3)
	b = append(b, name...)
	b = append(b, '=', '"')
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}
