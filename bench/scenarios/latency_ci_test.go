package scenarios

import "testing"

// TestMedianCI: benchmath's distribution-free interval of the median lies
// inside the range and holds the median; with too few values for 95%
// coverage it is the whole range, never ±Inf (results.json takes only
// finite figures).
func TestMedianCI(t *testing.T) {
	many := []float64{10, 3, 8, 1, 6, 2, 9, 4, 7, 5, 11, 12}
	lo, hi := medianCI(many)
	if lo <= 1 || hi >= 12 || lo > 6.5 || hi < 6.5 {
		t.Errorf("12 values: interval %v–%v, want inside (1, 12) around the median 6.5", lo, hi)
	}
	if many[0] != 10 {
		t.Errorf("medianCI sorted its argument in place: %v", many)
	}
	lo, hi = medianCI([]float64{5, 1, 3})
	if lo != 1 || hi != 5 {
		t.Errorf("3 values: interval %v–%v, want the whole range 1–5", lo, hi)
	}
}
