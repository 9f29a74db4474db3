package report

import (
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/analysis"
)

// Ties: figures inside each other's noise share a place and print "~";
// only figures apart beyond it are ranked, failed ones last.
func TestRankTies(t *testing.T) {
	e := func(c string, vals ...float64) analysis.Entry {
		return analysis.Entry{Contender: c, Values: vals, Unit: "ms"}
	}
	for _, tc := range []struct {
		name   string
		es     []analysis.Entry
		higher bool
		places []int
		want   []string // substrings of the text
		not    []string
	}{
		{"overlapping repetitions tie", []analysis.Entry{e("a", 10, 12, 14), e("b", 13, 15, 17)}, false, []int{1, 1}, []string{"a 12 ms (n=3) ~ b 15 ms (n=3)"}, []string{"then", "×"}},
		{"apart repetitions rank", []analysis.Entry{e("b", 20, 21, 22), e("a", 10, 11, 12)}, false, []int{1, 2}, []string{"a 11 ms (n=3), then b 21 ms (n=3, 1.91×)"}, nil},
		{"apart but within 5% ties", []analysis.Entry{e("a", 100, 100.1, 100.2), e("b", 100.4, 100.5, 100.6)}, false, []int{1, 1}, []string{" ~ "}, []string{"then"}},
		{"higher is better", []analysis.Entry{e("a", 10, 11, 12), e("b", 20, 21, 22)}, true, []int{1, 2}, []string{"b 21 ms (n=3), then a 11 ms"}, nil},
		{"one repetition: 1.5× ties", []analysis.Entry{e("a", 10), e("b", 15)}, false, []int{1, 1}, []string{"a 10 ms (n=1) ~ b 15 ms (n=1)"}, nil},
		{"one repetition: 2.5× ranks", []analysis.Entry{e("a", 10), e("b", 25)}, false, []int{1, 2}, []string{"a 10 ms (n=1), then b 25 ms (n=1, 2.50×)"}, nil},
		{"noise is never ranked", []analysis.Entry{e("a", 1, 2, 30), e("b", 40, 41, 42)}, false, []int{1, 0}, []string{"b 41 ms (n=3); not ranked (noise): a 2 ms (n=3, noise: 1 ms to 30 ms)"}, []string{"then", "~"}},
		// The hot lock of the full run of 2026-12-02: a noisy middle entry
		// (b) ties neither neighbour, and a and c, apart in every
		// repetition, do not share a place through d either.
		{"a noisy middle entry ties nothing", []analysis.Entry{e("a", 2.18, 2.27, 3.57), e("b", 3.82, 6.86, 2.84), e("c", 3.72, 4.29, 6.00), e("d", 8.23, 5.50, 7.40)}, false,
			[]int{1, 2, 2, 0}, []string{"a 2.27 ms (n=3), then c 4.29 ms (n=3, 1.89×) ~ d 7.40 ms (n=3, 3.26×); not ranked (noise): b 3.82 ms (n=3, noise: 2.84 ms to 6.86 ms)"}, nil},
		{"a tie needs every pair inseparable", []analysis.Entry{e("a", 10, 11, 12), e("b", 11.5, 13, 14), e("c", 13, 14, 15)}, false,
			[]int{1, 1, 3}, []string{"a 11 ms (n=3) ~ b 13 ms (n=3), then c 14 ms (n=3, 1.27×)"}, nil},
		// The host-loss margins of that run: a margin below zero in every
		// repetition is apart from the positive ones, and has no ratio.
		{"negative values: no negative ratio", []analysis.Entry{e("m", 401.6, 403.2), e("x", -3547.6, -3400), e("r", 674.9, 719.7)}, true,
			[]int{1, 2, 3}, []string{"r 697.3 ms (n=2), then m 402.4 ms (n=2, 0.58×), then x -3.47 s (n=2)"}, []string{", -", "noise"}},
		{"a noisy negative margin is shown unranked", []analysis.Entry{e("m", 401.6, 403.2), e("x", -3547.6, -638.5)}, true,
			[]int{1, 0}, []string{"m 402.4 ms (n=2); not ranked (noise): x -2.09 s (n=2, noise: -3.55 s to -0.638 s)"}, []string{"×)"}},
		{"a zero best gives no ∞×", []analysis.Entry{e("a", 0, 0), e("b", 5, 6)}, false, []int{1, 2}, []string{"a 0 ms (n=2), then b 5.50 ms (n=2)"}, []string{"∞"}},
		{"failed ranks last and ties with failed", []analysis.Entry{{Contender: "f", Failed: "never (> 5s)"}, e("a", 1900, 1950), {Contender: "g", Failed: "did not grant"}}, false, []int{1, 2, 2}, []string{"a 1.93 s (n=2), then f never (> 5s) ~ g did not grant"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := analysis.Rank(tc.es, tc.higher)
			for i, p := range tc.places {
				if got[i].Place != p {
					t.Errorf("place of %s = %d, want %d", got[i].Contender, got[i].Place, p)
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
