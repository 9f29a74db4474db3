package sessions

import (
	"errors"
	"math"
	"testing"
)

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		name             string
		pts              []Point
		slope, intercept float64
		r2               float64
		err              error
	}{
		{"exact line", []Point{{0, 10e6}, {1000, 14e6}, {2000, 18e6}}, 4000, 10e6, 1, nil},
		{"two points", []Point{{1000, 5}, {3000, 9}}, 0.002, 3, 1, nil},
		{"flat", []Point{{1, 7}, {2, 7}, {3, 7}}, 0, 7, 1, nil},
		{"noisy", []Point{{0, 1}, {1, 3}, {2, 2}, {3, 4}}, 0.8, 1.3, 0.64, nil},
		{"order does not matter", []Point{{2000, 18e6}, {0, 10e6}, {1000, 14e6}}, 4000, 10e6, 1, nil},
		{"negative slope", []Point{{0, 4}, {2, 0}}, -2, 4, 1, nil},
		{"one point", []Point{{1000, 5}}, 0, 0, 0, ErrTooFewPoints},
		{"none", nil, 0, 0, 0, ErrTooFewPoints},
		{"same X", []Point{{1000, 5}, {1000, 6}}, 0, 0, 0, ErrTooFewPoints},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Fit(tc.pts)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			if !near(l.Slope, tc.slope) || !near(l.Intercept, tc.intercept) || !near(l.R2, tc.r2) || l.N != len(tc.pts) {
				t.Fatalf("Fit = %+v, want slope %v intercept %v r2 %v", l, tc.slope, tc.intercept, tc.r2)
			}
		})
	}
	if _, err := Fit([]Point{{0, 1}, {1, math.NaN()}}); err == nil {
		t.Error("Fit accepted NaN")
	}
}

func TestPerSession(t *testing.T) {
	for _, tc := range []struct {
		empty, atC uint64
		c          int
		want       float64
	}{
		{8 << 20, 8<<20 + 4096*1000, 1000, 4096},
		{10, 10, 5, 0},
		{1000, 900, 100, -1},
	} {
		if got := PerSession(tc.empty, tc.atC, tc.c); got != tc.want {
			t.Errorf("PerSession(%d, %d, %d) = %v, want %v", tc.empty, tc.atC, tc.c, got, tc.want)
		}
	}
	if !math.IsNaN(PerSession(1, 2, 0)) {
		t.Error("PerSession at c=0 is not NaN")
	}
}
