package stats

import "testing"

func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		p    float64
		want float64
	}{{50, 5}, {95, 10}, {90, 9}, {10, 1}, {1, 1}, {100, 10}}
	for _, tt := range tests {
		if got := Percentile(v, tt.p); got != tt.want {
			t.Errorf("Percentile(1..10, %v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := Percentile([]float64{7}, 95); got != 7 {
		t.Errorf("Percentile([7], 95) = %v", got)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{1, 2, 9}, 2}, {[]float64{1, 2, 4, 9}, 3}}
	for _, tt := range tests {
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestMedianCI(t *testing.T) {
	seq := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i + 1)
		}
		return v
	}
	for _, tc := range []struct {
		n              int
		lo, hi         float64
		minLevel, maxL float64
	}{
		{1, 1, 1, 0, 0},
		{5, 1, 5, 0.93, 0.94},       // too few for 95%: the whole range, 93.75%
		{6, 1, 6, 0.96, 0.97},       // 1 - 2/64
		{10, 2, 9, 0.978, 0.979},    // 1 - 2·11/1024
		{20, 6, 15, 0.958, 0.959},   // ranks 6 and 15 of 20
		{40, 14, 27, 0.961, 0.9617}, // ranks 14 and 27 of 40
	} {
		lo, hi, level := MedianCI(seq(tc.n))
		if lo != tc.lo || hi != tc.hi || level < tc.minLevel || level > tc.maxL {
			t.Errorf("n=%d: MedianCI = %v, %v at %.4f; want %v, %v at %v…%v", tc.n, lo, hi, level, tc.lo, tc.hi, tc.minLevel, tc.maxL)
		}
	}
}
