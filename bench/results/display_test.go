package results

import "testing"

func TestNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {2393158, "2393158"}, {17, "17"}, {12.345, "12.3"}, {2.393158, "2.39"},
		{0.5, "0.500"}, {0.0123, "0.0123"}, {0.00004, "4e-05"}, {-3.14159, "-3.14"}, {1234.6, "1235"},
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
		{"1/s", []float64{5234.2}, 5234.2, "5234/s"},
		{"bytes", []float64{3 << 20}, 3 << 20, "3 MiB"},
		{"bytes", []float64{900}, 900, "900 B"},
		{"count", []float64{12}, 12, "12"},
		{"ms/s", []float64{41.5}, 41.5, "41.5 ms/s"},
		{"us", []float64{0}, 0, "0 µs"},
		{"ms", []float64{0.489, 2114}, 0.489, "0.489 ms"},
		{"ms", []float64{0.489, 2114}, 2114, "2114 ms"},
		{"ms", []float64{0.0005, 300000}, 300000, "300 s"},
	} {
		if got := DisplayFor(c.unit, c.values...).Format(c.v); got != c.want {
			t.Errorf("DisplayFor(%q, %v).Format(%v) = %q, want %q", c.unit, c.values, c.v, got, c.want)
		}
	}
}
