package report

import (
	"strings"
	"testing"
)

// Ties: figures inside each other's noise share a place and print "~";
// only figures apart beyond it are ranked, failed ones last.
func TestRankTies(t *testing.T) {
	e := func(c string, vals ...float64) entry { return entry{contender: c, vals: vals, unit: "ms"} }
	for _, tc := range []struct {
		name   string
		es     []entry
		higher bool
		places []int
		want   []string // substrings of the text
		not    []string
	}{
		{"overlapping repetitions tie", []entry{e("a", 10, 12, 14), e("b", 13, 15, 17)}, false, []int{1, 1}, []string{"a 12 ms (n=3) ~ b 15 ms (n=3)"}, []string{"then", "×"}},
		{"apart repetitions rank", []entry{e("b", 20, 21, 22), e("a", 10, 11, 12)}, false, []int{1, 2}, []string{"a 11 ms (n=3), then b 21 ms (n=3, 1.91×)"}, nil},
		{"apart but within 5% ties", []entry{e("a", 100, 100.1, 100.2), e("b", 100.4, 100.5, 100.6)}, false, []int{1, 1}, []string{" ~ "}, []string{"then"}},
		{"higher is better", []entry{e("a", 10, 11, 12), e("b", 20, 21, 22)}, true, []int{1, 2}, []string{"b 21 ms (n=3), then a 11 ms"}, nil},
		{"one repetition: 1.5× ties", []entry{e("a", 10), e("b", 15)}, false, []int{1, 1}, []string{"a 10 ms (n=1) ~ b 15 ms (n=1)"}, nil},
		{"one repetition: 2.5× ranks", []entry{e("a", 10), e("b", 25)}, false, []int{1, 2}, []string{"a 10 ms (n=1), then b 25 ms (n=1, 2.50×)"}, nil},
		{"noise is never ranked", []entry{e("a", 1, 2, 30), e("b", 40, 41, 42)}, false, []int{1, 1}, []string{"noise: 1–30"}, []string{"then"}},
		{"a zero best gives no ∞×", []entry{e("a", 0, 0), e("b", 5, 6)}, false, []int{1, 2}, []string{"a 0 ms (n=2), then b 5.5 ms (n=2)"}, []string{"∞"}},
		{"failed ranks last and ties with failed", []entry{{contender: "f", failed: "never (> 5s)"}, e("a", 1900, 1950), {contender: "g", failed: "did not grant"}}, false, []int{1, 2, 2}, []string{"a 1925 ms (n=2), then f never (> 5s) ~ g did not grant"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rank(tc.es, tc.higher)
			for i, p := range tc.places {
				if got[i].place != p {
					t.Errorf("place of %s = %d, want %d", got[i].contender, got[i].place, p)
				}
			}
			text := rankText(got)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("text %q lacks %q", text, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(text, w) {
					t.Errorf("text %q has %q", text, w)
				}
			}
		})
	}
}

// The U-test separates overlapping samples when there are enough of them
// (benchmath needs more than 3 per side at α = 0.05), and never with 3.
func TestSeparableUTest(t *testing.T) {
	a := []float64{10, 11, 12, 13, 14, 15, 16, 17, 21}
	b := []float64{20, 21, 22, 23, 24, 25, 26, 27, 12}
	if !separable(a, b) {
		t.Error("9 against 9 values, one outlier each: want separable by the U-test")
	}
	if separable([]float64{10, 11, 20}, []float64{19, 21, 22}) {
		t.Error("3 against 3 overlapping values: want a tie")
	}
}
