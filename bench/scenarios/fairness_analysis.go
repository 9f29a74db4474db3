package scenarios

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"
)

// Pending is the End of a request still waiting when the run stopped.
const Pending = time.Duration(math.MaxInt64)

// FairnessRequest is one acquire request of one client. Times are offsets on the
// bench's monotonic clock from the start of the run.
type FairnessRequest struct {
	Client int
	// Requested is when the client called Acquire.
	Requested time.Duration
	// Granted says whether the request was granted; Grant is when Acquire
	// returned the grant and Released when Release returned.
	Granted         bool
	Grant, Released time.Duration
	// End is when the request stopped waiting: Grant, the time Acquire
	// failed, or Pending.
	End time.Duration
}

// FairnessFigures are the fairness figures of one run's measured window.
type FairnessFigures struct {
	// Grants counts the grants in the window per client (index = client).
	Grants []int64
	// Jain is Jain's fairness index over Grants: (Σx)² / (n·Σx²), 1 when
	// every client got the same share, 1/n when one client got all.
	Jain float64
	// Inversions counts grants that overtook an earlier request still
	// pending (made more than the slack before the grant's own request);
	// StrictInversions is the same with no slack.
	Inversions, StrictInversions int64
	// Waits are grant − request of the grants in the window, in order of
	// grant.
	Waits []time.Duration
	// Held is the time within the window during which some client held the
	// lock (the union of [Grant, Released] intervals).
	Held time.Duration
}

// AnalyzeFairness computes the figures of the grants whose Grant falls in [from,
// to) among reqs (every request of the run, the warm-up's included: they
// can be overtaken too) for clients clients. slack treats requests made
// within slack of each other as simultaneous when counting inversions.
func AnalyzeFairness(reqs []FairnessRequest, clients int, from, to, slack time.Duration) FairnessFigures {
	f := FairnessFigures{Grants: make([]int64, clients)}
	byReq := slices.Clone(reqs)
	slices.SortFunc(byReq, func(a, b FairnessRequest) int { return cmp.Compare(a.Requested, b.Requested) })
	// latestEnd[i] is the latest End among byReq[:i+1]: a grant overtook an
	// earlier request iff some request made before it ended after it.
	latestEnd := make([]time.Duration, len(byReq))
	for i, r := range byReq {
		latestEnd[i] = r.End
		if i > 0 {
			latestEnd[i] = max(latestEnd[i], latestEnd[i-1])
		}
	}
	overtook := func(g FairnessRequest, slack time.Duration) bool {
		n := sort.Search(len(byReq), func(i int) bool { return byReq[i].Requested >= g.Requested-slack })
		return n > 0 && latestEnd[n-1] > g.Grant
	}

	var grants []FairnessRequest
	for _, r := range reqs {
		if r.Granted && r.Grant >= from && r.Grant < to {
			grants = append(grants, r)
		}
	}
	slices.SortFunc(grants, func(a, b FairnessRequest) int { return cmp.Compare(a.Grant, b.Grant) })
	var held []interval
	for _, g := range grants {
		f.Grants[g.Client]++
		f.Waits = append(f.Waits, g.Grant-g.Requested)
		if overtook(g, slack) {
			f.Inversions++
		}
		if overtook(g, 0) {
			f.StrictInversions++
		}
	}
	for _, r := range reqs {
		if r.Granted && r.Grant < to && r.Released > from {
			held = append(held, interval{max(r.Grant, from), min(r.Released, to)})
		}
	}
	f.Held = union(held)
	f.Jain = Jain(f.Grants)
	return f
}

// Jain returns Jain's fairness index of xs, (Σx)² / (n·Σx²); 0 when every
// x is 0 or xs is empty.
func Jain(xs []int64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += float64(x)
		sq += float64(x) * float64(x)
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(xs)) * sq)
}

type interval struct{ from, to time.Duration }

// union returns the total length covered by ivs.
func union(ivs []interval) time.Duration {
	slices.SortFunc(ivs, func(a, b interval) int { return cmp.Compare(a.from, b.from) })
	var total time.Duration
	var cur interval
	open := false
	for _, iv := range ivs {
		if iv.to <= iv.from {
			continue
		}
		if open && iv.from <= cur.to {
			cur.to = max(cur.to, iv.to)
			continue
		}
		if open {
			total += cur.to - cur.from
		}
		cur, open = iv, true
	}
	if open {
		total += cur.to - cur.from
	}
	return total
}
