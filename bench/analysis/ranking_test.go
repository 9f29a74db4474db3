package analysis

import "testing"

// The U-test separates overlapping samples when there are enough of them
// (benchmath needs more than 3 per side at α = 0.05), and never with 3.
func TestSeparableUTest(t *testing.T) {
	a := []float64{10, 11, 12, 13, 14, 15, 16, 17, 21}
	b := []float64{20, 21, 22, 23, 24, 25, 26, 27, 12}
	if !Separable(a, b) {
		t.Error("9 against 9 values, one outlier each: want separable by the U-test")
	}
	if Separable([]float64{10, 11, 20}, []float64{19, 21, 22}) {
		t.Error("3 against 3 overlapping values: want a tie")
	}
}
