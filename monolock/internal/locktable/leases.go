package locktable

import (
	"container/heap"
	"math"
	"time"
)

// leases orders the table's claims by when their lease would run out if
// no frame arrived (due), and keeps one timer for the earliest: one timer
// for the whole table instead of one per claim. A Touch does not move a
// claim; when its due comes, the claim is either expired or moved to one
// lease after the last frame heard, so a busy claim costs one heap move
// per lease, not one per frame. Guarded by the table's mutex.
type leases struct {
	heap  leaseHeap
	timer *time.Timer // runs Table.expireDue
	armed int64       // the due the timer is set for; math.MaxInt64: stopped
}

// leaseHeap is a min-heap of claims by due; each claim knows its slot.
type leaseHeap []*Claim

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot, h[j].slot = int32(i), int32(j)
}
func (h *leaseHeap) Push(x any) {
	c := x.(*Claim)
	c.slot = int32(len(*h))
	*h = append(*h, c)
}
func (h *leaseHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	c.slot = -1
	return c
}

// addLease enters c, due at c.due.
func (t *Table) addLease(c *Claim) {
	heap.Push(&t.leases.heap, c)
	t.armLeases()
}

// removeLease takes c out; the timer is left as it is (a fire finds nothing
// due and re-arms), unless no claim is left.
func (t *Table) removeLease(c *Claim) {
	if c.slot < 0 {
		return
	}
	heap.Remove(&t.leases.heap, int(c.slot))
	if len(t.leases.heap) == 0 {
		t.leases.timer.Stop()
		t.leases.armed = math.MaxInt64
	}
}

// armLeases sets the timer for the earliest due unless it already fires
// no later.
func (t *Table) armLeases() {
	l := &t.leases
	if len(l.heap) == 0 || l.heap[0].due >= l.armed {
		return
	}
	l.armed = l.heap[0].due
	l.timer.Reset(time.Duration(l.armed - t.clock()))
}

// expireDue is the lease timer: every claim whose due has come is ended
// when its silence has reached its lease, or moved to one lease after the
// last frame heard.
func (t *Table) expireDue() {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := &t.leases
	l.armed = math.MaxInt64
	now := t.clock()
	for len(l.heap) > 0 && l.heap[0].due <= now {
		c := l.heap[0]
		if due := c.heard.Load() + int64(c.Lease); due > now {
			c.due = due
			heap.Fix(&l.heap, 0)
			continue
		}
		next := t.remove(c, Expired)
		c.Notifier.Ended(Expired)
		t.notifyPromoted(next)
	}
	t.armLeases()
}
