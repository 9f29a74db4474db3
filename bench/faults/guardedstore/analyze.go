package guardedstore

import (
	"cmp"
	"slices"

	"github.com/monolock/monolock-bench/bench/check"
)

// Grant is one grant of a lock as the lock side saw it: the client got
// the lock at At and believed it held it until End.
type Grant struct {
	Client string `json:"client"`
	Lock   string `json:"lock"`
	// Token is the grant's fencing token, nil without one; recorded only.
	Token *uint64 `json:"token,omitempty"`
	// At is when the client learned it was granted (its acquire
	// returned), on the host's monotonic clock. That is no earlier than
	// the server's grant, so the analysis can only undercount.
	At check.Mono `json:"at"`
	// End is when the client stopped believing it held the lock (it
	// released, learned it lost the lock, or its validity ran out); 0
	// means it still believed so when the history ended.
	End check.Mono `json:"end,omitempty"`
}

// held reports whether the grant's holder still believed it held the lock
// at t.
func (g Grant) held(t check.Mono) bool { return g.At <= t && (g.End == 0 || t < g.End) }

// Unsafe is an accepted write that another client's later grant had
// already superseded.
type Unsafe struct {
	// Entry is the write.
	Entry Entry `json:"entry"`
	// Own is the writer's latest grant of the lock before the write.
	Own Grant `json:"own"`
	// Later is the first grant to another client after Own and no later
	// than the write.
	Later Grant `json:"later"`
}

// Interval is a stretch of one client's accepted writes to a lock under
// one grant, as the resource saw it: from its first to its last write.
type Interval struct {
	Client string `json:"client"`
	Lock   string `json:"lock"`
	// Grant indexes the Analyze grants slice; -1 for writes under no
	// grant (or when Analyze had no grants: then one interval per client).
	Grant  int        `json:"grant"`
	From   check.Mono `json:"from"`
	To     check.Mono `json:"to"`
	Writes int        `json:"writes"`
}

// Overlap is two clients' ownership of the same lock, as the resource saw
// it through their accepted writes, intersecting in time.
type Overlap struct {
	// First is the interval that started first.
	First  Interval `json:"first"`
	Second Interval `json:"second"`
}

// DoubleGrant is a grant of a lock to a client while another client still
// believed it held the lock.
type DoubleGrant struct {
	// Held is the grant still believed held when Second was made.
	Held Grant `json:"held"`
	// Second is the later grant to another client.
	Second Grant `json:"second"`
}

// Analysis is what a history and a grant timeline show about safety.
type Analysis struct {
	// Writes counts every entry; Accepted and Rejected split it.
	Writes   int `json:"writes"`
	Accepted int `json:"accepted"`
	Rejected int `json:"rejected"`
	// RejectedByFencing counts writes rejected for a stale token (the
	// lower token of an earlier grant); RejectedNoToken those a fenced
	// store rejected for carrying none.
	RejectedByFencing int `json:"rejected_by_fencing"`
	RejectedNoToken   int `json:"rejected_no_token"`
	// Unsafe lists accepted writes from a client after another client's
	// later grant of the same lock: the resource took a stale owner's
	// write.
	Unsafe []Unsafe `json:"unsafe,omitempty"`
	// Prevented counts rejected writes that would have been Unsafe had
	// the store accepted them: what fencing changed.
	Prevented int `json:"prevented"`
	// Ungranted counts accepted writes from a client that had no grant of
	// the lock before the write (a bug in the caller, not in the lock).
	Ungranted int `json:"ungranted"`
	// Overlaps lists pairs of ownership intervals of different clients
	// on the same lock that intersect.
	Overlaps []Overlap `json:"overlaps,omitempty"`
	// DoubleGrants lists grants made while another client still believed
	// it held the lock.
	DoubleGrants []DoubleGrant `json:"double_grants,omitempty"`
}

// Analyze reads a store's history together with the grants of the same
// locks (any order; both on CLOCK_MONOTONIC, check.Mono) and reports:
//
//   - unsafe writes: an accepted write by client C on lock L at t is unsafe
//     when another client D was granted L after C's latest grant of L
//     before t and no later than t;
//   - writes rejected by fencing, and how many of them would have been
//     unsafe (Prevented);
//   - overlapping ownership: each client's accepted writes to a lock under
//     one grant form an interval [first, last]; intervals of different
//     clients on one lock that intersect overlap;
//   - double grants: a grant of L to D while C (C ≠ D) still believed it
//     held L (C's grant started and had not ended).
//
// With no grants, only the counts and the overlaps (one interval per
// client and lock) are meaningful.
func Analyze(history []Entry, grants []Grant) Analysis {
	var a Analysis
	byLock := map[string][]int{} // lock → indexes into grants, by At
	for i, g := range grants {
		byLock[g.Lock] = append(byLock[g.Lock], i)
	}
	for _, idx := range byLock {
		slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(grants[x].At, grants[y].At) })
	}

	type intervalKey struct {
		lock, client string
		grant        int
	}
	intervals := map[intervalKey]*Interval{}
	var order []intervalKey

	for _, e := range history {
		a.Writes++
		own, later := -1, -1
		for _, i := range byLock[e.Lock] {
			g := grants[i]
			if g.At > e.At {
				break
			}
			if g.Client == e.Client {
				own, later = i, -1
			} else if own >= 0 && later < 0 {
				later = i
			}
		}
		unsafe := own >= 0 && later >= 0
		if !e.Accepted {
			a.Rejected++
			switch e.Reason {
			case ReasonStale:
				a.RejectedByFencing++
			case ReasonNoToken:
				a.RejectedNoToken++
			}
			if unsafe {
				a.Prevented++
			}
			continue
		}
		a.Accepted++
		if unsafe {
			a.Unsafe = append(a.Unsafe, Unsafe{Entry: e, Own: grants[own], Later: grants[later]})
		}
		if own < 0 && len(grants) > 0 {
			a.Ungranted++
		}
		k := intervalKey{e.Lock, e.Client, own}
		iv := intervals[k]
		if iv == nil {
			iv = &Interval{Client: e.Client, Lock: e.Lock, Grant: own, From: e.At, To: e.At}
			intervals[k] = iv
			order = append(order, k)
		}
		iv.From, iv.To = min(iv.From, e.At), max(iv.To, e.At)
		iv.Writes++
	}

	for i, ki := range order {
		for _, kj := range order[i+1:] {
			x, y := intervals[ki], intervals[kj]
			if x.Lock == y.Lock && x.Client != y.Client && x.From <= y.To && y.From <= x.To {
				first, second := *x, *y
				if second.From < first.From {
					first, second = second, first
				}
				a.Overlaps = append(a.Overlaps, Overlap{First: first, Second: second})
			}
		}
	}

	locks := make([]string, 0, len(byLock))
	for l := range byLock {
		locks = append(locks, l)
	}
	slices.Sort(locks)
	for _, l := range locks {
		idx := byLock[l]
		for j, second := range idx {
			for _, held := range idx[:j] {
				h, s := grants[held], grants[second]
				if h.Client != s.Client && h.held(s.At) {
					a.DoubleGrants = append(a.DoubleGrants, DoubleGrant{Held: h, Second: s})
				}
			}
		}
	}
	return a
}
