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
