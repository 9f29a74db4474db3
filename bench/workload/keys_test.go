package workload

import (
	"math"
	"math/rand/v2"
	"testing"
)

// counts draws n keys from c with a fixed seed.
func counts(c *KeyChooser, count, n int, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, 0))
	out := make([]int, count)
	for range n {
		out[c.Next(r)]++
	}
	return out
}

// chiSquare is Pearson's statistic of observed counts against the shares
// of want.
func chiSquare(obs []int, want *KeyChooser, n int) float64 {
	var x2 float64
	for i, o := range obs {
		e := want.Share(i) * float64(n)
		x2 += (float64(o) - e) * (float64(o) - e) / e
	}
	return x2
}

// chi2Critical99 is the 0.999 quantile of the chi-square distribution with
// 99 degrees of freedom: a correct sampler exceeds it once in 1,000 seeds.
const chi2Critical99 = 148.23

func TestZipfianFrequencies(t *testing.T) {
	const n, keys = 200_000, 100
	for _, theta := range []float64{0.5, 0.99, 1, 2} {
		k := Keys{Count: keys, Dist: Zipfian, Theta: theta}
		c := k.Chooser()
		obs := counts(c, keys, n, 1)
		if x2 := chiSquare(obs, c, n); x2 > chi2Critical99 {
			t.Errorf("theta %v: chi-square %.1f over %d draws, above %.1f: the ranks do not follow 1/k^theta", theta, x2, n, chi2Critical99)
		}
		// The most used ranks, one by one: within 5 standard errors.
		for i := range 3 {
			p := c.Share(i)
			sd := math.Sqrt(p * (1 - p) / n)
			if got := float64(obs[i]) / n; math.Abs(got-p) > 5*sd {
				t.Errorf("theta %v: rank %d got %.4f of draws, want %.4f", theta, i+1, got, p)
			}
		}
		// The shares are 1/k^theta normalised.
		if r := c.Share(0) / c.Share(1); !within(r, math.Pow(2, theta), 1e-9) {
			t.Errorf("theta %v: share(1)/share(2) = %v, want 2^theta", theta, r)
		}
	}
	// The test can tell: draws of theta 0.99 are far from theta 0.9.
	c99 := Keys{Count: keys, Dist: Zipfian, Theta: 0.99}.Chooser()
	c90 := Keys{Count: keys, Dist: Zipfian, Theta: 0.9}.Chooser()
	if x2 := chiSquare(counts(c99, keys, n, 1), c90, n); x2 < 10*chi2Critical99 {
		t.Errorf("theta 0.99 against 0.9: chi-square %.1f, want far above %.1f", x2, chi2Critical99)
	}
}

// TestZipfianYCSBShares: the shares of the most used keys of 5,000 at
// YCSB's constant, from the closed form 1/(k^θ · H(n, θ)).
func TestZipfianYCSBShares(t *testing.T) {
	k := Keys{Count: 5000, Dist: Zipfian, Theta: 0.99}
	var h float64
	for i := 1; i <= k.Count; i++ {
		h += math.Pow(float64(i), -0.99)
	}
	for _, rank := range []int{1, 2, 10, 5000} {
		if got, want := k.Share(rank-1), math.Pow(float64(rank), -0.99)/h; !within(got, want, 1e-9) {
			t.Errorf("rank %d: share %v, want %v", rank, got, want)
		}
	}
	if k.Share(5000) != 0 || k.Share(-1) != 0 {
		t.Error("a share outside the key space")
	}
}

func TestHotSetShares(t *testing.T) {
	const n = 100_000
	k := Keys{Count: 1000, Dist: HotSet, HotKeys: 0.01, HotTraffic: 0.9}
	if k.HotCount() != 10 {
		t.Fatalf("hot count %d, want 10", k.HotCount())
	}
	obs := counts(k.Chooser(), k.Count, n, 2)
	var hot int
	for i := range k.HotCount() {
		hot += obs[i]
		// Each hot key: 9% of the draws, standard error 0.09%.
		if got := float64(obs[i]) / n; math.Abs(got-0.09) > 0.005 {
			t.Errorf("hot key %d: %.4f of draws, want 0.09", i, got)
		}
	}
	// The hot set: 90%, standard error 0.095%.
	if got := float64(hot) / n; math.Abs(got-0.9) > 0.005 {
		t.Errorf("hot set: %.4f of draws, want 0.9", got)
	}
	for i := k.HotCount(); i < k.Count; i++ {
		if obs[i] > 40 { // 0.1/990 of 100k is about 10 each
			t.Errorf("cold key %d drawn %d times", i, obs[i])
		}
	}
	if x2 := chiSquare(obs, k.Chooser(), n); x2 > 1200 { // 999 degrees of freedom: 0.999 quantile ≈ 1143
		t.Errorf("chi-square %.1f", x2)
	}
}

func TestUniformKeys(t *testing.T) {
	const n = 200_000
	k := Keys{Count: 100}
	c := k.Chooser()
	if x2 := chiSquare(counts(c, k.Count, n, 3), c, n); x2 > chi2Critical99 {
		t.Errorf("chi-square %.1f, above %.1f", x2, chi2Critical99)
	}
	one := Keys{Count: 1}.Chooser()
	r := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		if one.Next(r) != 0 {
			t.Fatal("one key, drew another")
		}
	}
}

func TestSharesSumToOne(t *testing.T) {
	for _, k := range []Keys{
		{Count: 50},
		{Count: 50, Dist: Zipfian, Theta: 0.7},
		{Count: 50, Dist: HotSet, HotKeys: 0.1, HotTraffic: 0.6},
	} {
		var sum float64
		for i := range k.Count {
			sum += k.Share(i)
		}
		if !within(sum, 1, 1e-12) {
			t.Errorf("%v: shares sum to %v", k, sum)
		}
	}
}
