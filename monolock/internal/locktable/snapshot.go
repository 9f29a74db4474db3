package locktable

import (
	"slices"
	"strings"
	"time"
)

// Holder describes the owner of a lock.
type Holder struct {
	Name       string // the lock's name
	Session    uint64
	Identity   string
	RemoteAddr string
	Since      time.Time // when ownership was granted
	Lease      time.Duration
	Token      uint64
}

// Waiter describes a queued claim.
type Waiter struct {
	Session    uint64
	Identity   string
	RemoteAddr string
	QueuedAt   time.Time
	Lease      time.Duration
}

// Lock describes one live lock: a name with an owner or waiters.
type Lock struct {
	Name    string
	Holder  *Holder  // nil when the lock has only waiters (after Close)
	Waiters []Waiter // in queue order
}

// Counts are the live locks, ownerships and queued claims.
type Counts struct {
	Locks   int // names with an owner or waiters
	Held    int // locks with an owner
	Waiting int // queued claims, across all locks
}

func (c *Claim) holder() Holder {
	return Holder{Name: c.Name, Session: c.Session, Identity: c.Identity, RemoteAddr: c.RemoteAddr, Since: c.since, Lease: c.Lease, Token: c.token}
}

func (lk *lock) describe() Lock {
	l := Lock{Name: lk.name, Waiters: make([]Waiter, 0, lk.waiting)}
	if lk.owner != nil {
		h := lk.owner.holder()
		l.Holder = &h
	}
	for w := lk.head; w != nil; w = w.next {
		l.Waiters = append(l.Waiters, Waiter{Session: w.Session, Identity: w.Identity, RemoteAddr: w.RemoteAddr, QueuedAt: w.since, Lease: w.Lease})
	}
	return l
}

// Snapshot describes every live lock whose name satisfies match (all when
// match is nil), sorted by name. match is called with the table's mutex
// held and must not call into the table.
func (t *Table) Snapshot(match func(name string) bool) []Lock {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Lock
	for name, lk := range t.locks {
		if match == nil || match(name) {
			out = append(out, lk.describe())
		}
	}
	slices.SortFunc(out, func(a, b Lock) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup describes the named lock; ok is false when it is idle.
func (t *Table) Lookup(name string) (l Lock, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lk := t.locks[name]
	if lk == nil {
		return Lock{}, false
	}
	return lk.describe(), true
}

// Counts returns the number of live locks, ownerships and queued claims.
func (t *Table) Counts() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Counts{Locks: len(t.locks), Held: t.held, Waiting: t.waiting}
}
