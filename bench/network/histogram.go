package network

import (
	"math/bits"
	"time"
)

// histogram counts non-negative durations in log-linear buckets: exact
// below 32 ns, then 16 buckets per power of two (a value is known to
// within 1/16 of itself). Its zero value is empty; it is not safe for
// concurrent use. Buckets are exported for the line's JSON reports.
type histogram struct {
	Counts [976]uint64 `json:"counts"`
}

func bucketOf(v uint64) int {
	if v < 32 {
		return int(v)
	}
	s := bits.Len64(v) - 5
	m := v >> s // in [16, 32)
	return 32 + (s-1)*16 + int(m-16)
}

// bucketMid returns a value in the middle of bucket i.
func bucketMid(i int) uint64 {
	if i < 32 {
		return uint64(i)
	}
	s := (i-32)/16 + 1
	m := uint64((i-32)%16 + 16)
	return m<<s + (uint64(1)<<s)/2
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.Counts[bucketOf(uint64(d))]++
}

func (h *histogram) total() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// quantile returns the q-quantile (0 < q ≤ 1), or 0 when empty.
func (h *histogram) quantile(q float64) time.Duration {
	n := h.total()
	if n == 0 {
		return 0
	}
	rank := uint64(q*float64(n) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank {
			return time.Duration(bucketMid(i))
		}
	}
	return 0
}

// maxValue returns the middle of the highest non-empty bucket.
func (h *histogram) maxValue() time.Duration {
	for i := len(h.Counts) - 1; i >= 0; i-- {
		if h.Counts[i] != 0 {
			return time.Duration(bucketMid(i))
		}
	}
	return 0
}

// sub returns h minus an earlier copy of itself.
func (h *histogram) sub(earlier *histogram) histogram {
	var d histogram
	for i := range h.Counts {
		d.Counts[i] = h.Counts[i] - earlier.Counts[i]
	}
	return d
}
