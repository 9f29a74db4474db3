package results

import (
	"math"
	"testing"
)

func TestNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {2393158, "2,393,158"}, {-19734, "-19,734"}, {999, "999"}, {17, "17"}, {12.345, "12.3"}, {2.393158, "2.39"},
		{0.5, "0.500"}, {0.0123, "0.0123"}, {0.00004, "4e-05"}, {-3.14159, "-3.14"}, {1234.6, "1,235"},
	} {
		if got := Num(c.v); got != c.want {
			t.Errorf("Num(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestDisplayFor: the unit follows the largest magnitude of the values it
// is chosen for, so one column reads in one unit.
func TestDisplayFor(t *testing.T) {
	for _, c := range []struct {
		unit   string
		values []float64
		v      float64
		want   string
	}{
		{"us", []float64{2393158}, 2393158, "2.39 s"},
		{"us", []float64{850}, 850, "850 µs"},
		{"us", []float64{850, 4200}, 850, "0.850 ms"},
		{"ms", []float64{0.25}, 0.25, "250 µs"},
		{"ms", []float64{1500}, 1500, "1.50 s"},
		{"ms", []float64{12.5, 30}, 12.5, "12.5 ms"},
		{"s", []float64{0.002}, 0.002, "2 ms"},
		{"1/s", []float64{5234.2}, 5234.2, "5,234/s"},
		{"bytes", []float64{3 << 20}, 3 << 20, "3 MiB"},
		{"bytes", []float64{900}, 900, "900 B"},
		{"count", []float64{12}, 12, "12"},
		{"ms/s", []float64{41.5}, 41.5, "41.5 ms/s"},
		{"us", []float64{0}, 0, "0 µs"},
		{"ms", []float64{0.489, 2114}, 0.489, "0.489 ms"},
		{"ms", []float64{0.489, 2114}, 2114, "2,114 ms"},
		{"ms", []float64{0.0005, 300000}, 300000, "300 s"},
	} {
		if got := DisplayFor(c.unit, c.values...).Format(c.v); got != c.want {
			t.Errorf("DisplayFor(%q, %v).Format(%v) = %q, want %q", c.unit, c.values, c.v, got, c.want)
		}
	}
}

// TestTick: an axis reads its ticks as written, without the float noise of
// the ticker's steps.
func TestTick(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{-0.8000000000000002, "-0.8"}, {0.30000000000000004, "0.3"}, {0.25, "0.25"}, {25000, "25,000"},
		{-1200.5, "-1,200.5"}, {0, "0"}, {math.Copysign(0, -1), "0"}, {1e-5, "0.00001"},
	} {
		if got := Tick(c.v); got != c.want {
			t.Errorf("Tick(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestSpan: a figure over repetitions reads as median, range and n; a
// yes/no figure as how many said yes, never as a median of 0.500.
func TestSpan(t *testing.T) {
	for _, c := range []struct {
		vals []float64
		unit string
		want string
	}{
		{[]float64{1, 0}, "bool", "1 of 2"},
		{[]float64{1, 1, 0}, "bool", "2 of 3"},
		{[]float64{0}, "bool", "0 of 1"},
		{[]float64{127.3, 114.1, 121.8}, "us", "121.8 µs (114.1–127.3, n=3)"},
		{[]float64{19734}, "count", "19,734 (n=1)"},
		{[]float64{400.1, 400.1}, "ms", "400.1 ms (n=2)"},
	} {
		if got := Span(c.vals, c.unit); got != c.want {
			t.Errorf("Span(%v, %q) = %q, want %q", c.vals, c.unit, got, c.want)
		}
	}
}
