package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// KeyDist names how requests spread over the keys.
type KeyDist int

// The key distributions.
const (
	// UniformKeys gives every key the same share.
	UniformKeys KeyDist = iota
	// Zipfian gives the key of rank k (1 = the most used) a share
	// proportional to 1/k^Theta, as YCSB's zipfian request distribution
	// (its constant, default 0.99, is Theta).
	Zipfian
	// HotSet gives a share HotTraffic of the requests to the first
	// HotKeys × Count keys and the rest to the others, uniformly within
	// each set (YCSB's hotspot distribution).
	HotSet
)

// Limits of the key space.
const (
	// MaxKeys bounds Keys.Count: a zipfian chooser keeps one float64 per
	// key.
	MaxKeys = 1_000_000
	// DefaultTheta is YCSB's zipfian constant.
	DefaultTheta = 0.99
	// MaxTheta bounds Theta: at 3 the most used key already takes 83% of
	// the requests; beyond, state a hot set or one key.
	MaxTheta = 3.0
)

// Keys is the key space of a workload. Key indices run from 0 to Count−1
// and are ranked: index 0 is the most used key under Zipfian, and indices
// below HotCount are the hot set under HotSet.
type Keys struct {
	Count int
	Dist  KeyDist
	// Theta is the zipfian constant (Zipfian only).
	Theta float64
	// HotKeys and HotTraffic are the hot set's share of the keys and of
	// the requests (HotSet only), both strictly between 0 and 1.
	HotKeys, HotTraffic float64

	chooser *KeyChooser // built by the parser, read-only
}

// HotCount is the number of keys in the hot set: HotKeys × Count rounded,
// at least 1.
func (k Keys) HotCount() int {
	return max(1, int(math.Round(k.HotKeys*float64(k.Count))))
}

// Chooser returns the sampler of k's key indices. It is safe for
// concurrent use, each goroutine with its own *rand.Rand.
func (k Keys) Chooser() *KeyChooser {
	if k.chooser == nil {
		return newKeyChooser(k)
	}
	return k.chooser
}

// Share returns the share of requests that go to key index i.
func (k Keys) Share(i int) float64 { return k.Chooser().Share(i) }

// String describes k: "5,000 keys, zipfian (theta 0.7)".
func (k Keys) String() string {
	s := countNoun(k.Count, "key", "keys")
	switch k.Dist {
	case Zipfian:
		s += fmt.Sprintf(", zipfian (theta %g)", k.Theta)
	case HotSet:
		s += fmt.Sprintf(", hot set: %s of the requests on %s of the keys (%s)",
			percent(k.HotTraffic), percent(k.HotKeys), countNoun(k.HotCount(), "key", "keys"))
	default:
		if k.Count > 1 {
			s += ", uniform"
		}
	}
	return s
}

// KeyChooser draws key indices. Its tables are read-only after it is
// built: it is safe for concurrent use with one *rand.Rand per goroutine.
type KeyChooser struct {
	keys Keys
	// cdf[i] is the share of requests on keys 0..i (Zipfian only); the
	// last entry is exactly 1.
	cdf []float64
}

func newKeyChooser(k Keys) *KeyChooser {
	c := &KeyChooser{keys: k}
	if k.Dist == Zipfian {
		c.cdf = make([]float64, k.Count)
		var sum float64
		for i := range c.cdf {
			sum += math.Pow(float64(i+1), -k.Theta)
			c.cdf[i] = sum
		}
		for i := range c.cdf {
			c.cdf[i] /= sum
		}
		c.cdf[k.Count-1] = 1
	}
	return c
}

// Next draws one key index in [0, Count).
func (c *KeyChooser) Next(r *rand.Rand) int {
	k := c.keys
	switch k.Dist {
	case Zipfian:
		u := r.Float64()
		return sort.Search(len(c.cdf)-1, func(i int) bool { return c.cdf[i] > u })
	case HotSet:
		hot := k.HotCount()
		if r.Float64() < k.HotTraffic {
			return r.IntN(hot)
		}
		return hot + r.IntN(k.Count-hot)
	}
	return r.IntN(k.Count)
}

// Share returns the share of draws that return i.
func (c *KeyChooser) Share(i int) float64 {
	k := c.keys
	if i < 0 || i >= k.Count {
		return 0
	}
	switch k.Dist {
	case Zipfian:
		if i == 0 {
			return c.cdf[0]
		}
		return c.cdf[i] - c.cdf[i-1]
	case HotSet:
		hot := k.HotCount()
		if i < hot {
			return k.HotTraffic / float64(hot)
		}
		return (1 - k.HotTraffic) / float64(k.Count-hot)
	}
	return 1 / float64(k.Count)
}
