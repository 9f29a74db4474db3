package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The statistical tests draw from fixed seeds: they are deterministic, and
// their tolerances are several standard errors wide, so that they fail for
// a wrong sampler, not for an unlucky seed.

const draws = 200_000

func sample(d Distribution, seed uint64) []time.Duration {
	r := rand.New(rand.NewPCG(seed, 0))
	out := make([]time.Duration, draws)
	for i := range out {
		out[i] = d.Sample(r)
	}
	slices.Sort(out)
	return out
}

func mean(xs []time.Duration) float64 {
	var s float64
	for _, x := range xs {
		s += x.Seconds()
	}
	return s / float64(len(xs))
}

// quantile of sorted xs.
func quantile(xs []time.Duration, q float64) time.Duration {
	return xs[int(q*float64(len(xs)-1))]
}

// quantileTolerance is 5 standard errors of the sample q-quantile of
// `draws` draws of d, relative to the quantile: the sample quantile's
// standard error is √(q(1−q)/N)/φ(z) in normal scores, times the local
// slope of ln(value) in z (the steeper of the two sides).
func quantileTolerance(d Distribution, q float64) float64 {
	const h = 1e-3
	z := normalQuantile(q)
	lnQ := func(z float64) float64 { return math.Log(d.Quantile(normalCDF(z)).Seconds()) }
	slope := math.Max(lnQ(z+h)-lnQ(z), lnQ(z)-lnQ(z-h)) / h
	density := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
	return max(5*slope*math.Sqrt(q*(1-q)/draws)/density, 1e-3)
}

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

func TestDistributionMeans(t *testing.T) {
	tests := []struct {
		name string
		d    Distribution
		mean time.Duration // the exact mean
		rel  float64       // tolerance of the sample mean
	}{
		{"fixed", Distribution{Kind: Fixed, Fixed: ms(20)}, ms(20), 1e-9},
		{"uniform", Distribution{Kind: Uniform, Min: ms(20), Max: ms(200)}, ms(110), 0.005},
		// Exponential: the sample mean's standard error is mean/√N = 0.22%.
		{"exponential", Distribution{Kind: Exponential, Mean: ms(50)}, ms(50), 0.015},
		{"exponential capped", Distribution{Kind: Exponential, Mean: ms(50), Max: ms(50)}, ms(50 * (1 - math.Exp(-1))), 0.015},
		// Two percentiles are the log-normal through them: mean e^(µ+σ²/2).
		{"log-normal", Distribution{Kind: Percentiles, Points: []Point{{50, ms(20)}, {99, ms(200)}}},
			ms(20 * math.Exp(math.Pow(math.Log(10)/normalQuantile(0.99), 2)/2)), 0.02},
		{"percentiles clamped", Distribution{Kind: Percentiles, Points: []Point{{50, ms(20)}, {99, ms(200)}}, Min: ms(10), Max: ms(300)}, 0, 0.02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.d.MeanValue()
			if tt.mean > 0 && !within(want.Seconds(), tt.mean.Seconds(), 1e-4) {
				t.Errorf("MeanValue %v, want %v", want, tt.mean)
			}
			xs := sample(tt.d, 1)
			if got := mean(xs); !within(got, want.Seconds(), tt.rel) {
				t.Errorf("sample mean %.6fs, want %v within %.1f%%", got, want, tt.rel*100)
			}
			if hi := tt.d.Max; hi > 0 && xs[len(xs)-1] > hi {
				t.Errorf("a draw of %v above the bound %v", xs[len(xs)-1], hi)
			}
			if tt.d.Min > 0 && xs[0] < tt.d.Min {
				t.Errorf("a draw of %v below min %v", xs[0], tt.d.Min)
			}
		})
	}
}

// TestPercentileHold: a percentile distribution passes through every given
// point, exactly by its quantile function and within 2% by its draws.
func TestPercentileHold(t *testing.T) {
	for _, pts := range [][]Point{
		{{50, ms(20)}, {99, ms(200)}},
		{{1, ms(20)}, {50, ms(50)}, {99, ms(200)}},
		{{50, ms(5)}, {90, ms(8)}, {99, ms(80)}, {99.9, ms(400)}},
		{{50, ms(20)}, {99, ms(20)}}, // flat: a fixed 20ms
	} {
		d := Distribution{Kind: Percentiles, Points: pts}
		xs := sample(d, 2)
		for _, p := range pts {
			q := p.Percentile / 100
			if got := d.Quantile(q); !within(got.Seconds(), p.Value.Seconds(), 1e-6) {
				t.Errorf("%v: Quantile(%v) = %v, want %v", d, q, got, p.Value)
			}
			tol := quantileTolerance(d, q)
			if got := quantile(xs, q); !within(got.Seconds(), p.Value.Seconds(), tol) {
				t.Errorf("%v: sample %s = %v, want %v within %.0f%%", d, percentileName(p.Percentile), got, p.Value, tol*100)
			}
		}
	}
	// Between the points the scale is log-normal: halfway in z between p50
	// and p99 of {20ms, 200ms} is √(20·200) ms.
	d := Distribution{Kind: Percentiles, Points: []Point{{50, ms(20)}, {99, ms(200)}}}
	if got := d.Quantile(normalCDF(normalQuantile(0.99) / 2)); !within(got.Seconds(), math.Sqrt(20*200)/1e3, 1e-6) {
		t.Errorf("midpoint %v, want %v", got, ms(math.Sqrt(20*200)))
	}
}

// TestExceeds: Exceeds is the complement of Quantile, and matches the
// share of draws above a value.
func TestExceeds(t *testing.T) {
	for _, d := range []Distribution{
		{Kind: Uniform, Min: ms(1000), Max: ms(4000)},
		{Kind: Exponential, Mean: ms(50)},
		{Kind: Percentiles, Points: []Point{{50, ms(20)}, {99, ms(200)}}},
		{Kind: Percentiles, Points: []Point{{1, ms(20)}, {50, ms(50)}, {99, ms(200)}}},
	} {
		xs := sample(d, 3)
		for _, q := range []float64{0.01, 0.3, 0.5, 0.9, 0.99} {
			v := d.Quantile(q)
			if got := d.Exceeds(v); !within(got, 1-q, 1e-3) {
				t.Errorf("%v: Exceeds(Quantile(%v) = %v) = %v, want %v", d, q, v, got, 1-q)
			}
			above := len(xs) - countAtOrBelow(xs, v)
			if got := float64(above) / float64(len(xs)); math.Abs(got-(1-q)) > 0.005 {
				t.Errorf("%v: %.4f of draws above %v, want %.4f", d, got, v, 1-q)
			}
		}
	}
	fixed := Distribution{Kind: Fixed, Fixed: ms(3)}
	if fixed.Exceeds(ms(2)) != 1 || fixed.Exceeds(ms(3)) != 0 {
		t.Error("fixed Exceeds")
	}
	capped := Distribution{Kind: Percentiles, Points: []Point{{50, ms(20)}, {99, ms(200)}}, Min: ms(10), Max: ms(300)}
	if capped.Exceeds(ms(300)) != 0 || capped.Exceeds(ms(9)) != 1 {
		t.Error("clamps ignored by Exceeds")
	}
}

// countAtOrBelow returns the number of sorted xs at or below v.
func countAtOrBelow(xs []time.Duration, v time.Duration) int {
	i, _ := slices.BinarySearchFunc(xs, v, func(x, v time.Duration) int {
		if x <= v {
			return -1
		}
		return 1
	})
	return i
}

func TestSampleDeterministic(t *testing.T) {
	d := Distribution{Kind: Percentiles, Points: []Point{{50, ms(20)}, {99, ms(200)}}}
	a, b, c := sample(d, 9), sample(d, 9), sample(d, 10)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave different draws")
	}
	if slices.Equal(a, c) {
		t.Error("two seeds gave the same draws")
	}
}

func TestDistributionString(t *testing.T) {
	for d, want := range map[*Distribution]string{
		{Kind: Fixed, Fixed: 2 * time.Minute}:                                         "2m",
		{Kind: Uniform, Min: ms(20), Max: ms(200)}:                                    "uniform 20ms–200ms",
		{Kind: Exponential, Mean: ms(50), Max: time.Second}:                           "exponential, mean 50ms, at most 1s",
		{Kind: Percentiles, Points: []Point{{50, ms(20)}, {99.9, ms(200)}}, Min: 1e6}: "p50 20ms, p99.9 200ms, at least 1ms",
	} {
		if got := d.String(); got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
