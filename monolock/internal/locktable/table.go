// Package locktable holds the lock semantics of the monolock server: per
// lock name an owner and a FIFO queue of waiters, the lease of every claim,
// and the global fencing-token sequence. It does no I/O: the server maps
// connections to claims and frames to calls, and the table tells it, through
// each claim's Notifier, when a claim is promoted or ended by the table.
//
// Only names with an owner or waiters are stored, so memory is proportional
// to live claims. Leases run on the monotonic clock, with one timer for the
// whole table (leases.go), which testing/synctest can drive.
package locktable

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Reason says why a claim left the table.
type Reason uint8

// Reasons, reported as the reason label of released ownerships.
const (
	// Graceful: the session ended on the client's side — close, reset, or a
	// protocol error by the client.
	Graceful Reason = iota
	// Expired: the session was silent for longer than its lease.
	Expired
	// IOTimeout: a started frame or a write did not complete within the
	// server's io-timeout.
	IOTimeout
	// Force: an administrator force-released the owner or kicked the waiter.
	Force
	// Shutdown: the server is shutting down.
	Shutdown
)

// Reasons lists every Reason, in order, for exporters that report zeros.
var Reasons = [...]Reason{Graceful, Expired, IOTimeout, Force, Shutdown}

// String returns the metric label of the reason.
func (r Reason) String() string {
	switch r {
	case Graceful:
		return "graceful"
	case Expired:
		return "expired"
	case IOTimeout:
		return "io_timeout"
	case Force:
		return "force"
	case Shutdown:
		return "shutdown"
	}
	return "unknown"
}

// Errors callers branch on.
var (
	// ErrClosed is returned by Acquire after Close.
	ErrClosed = errors.New("monolock: lock table closed")
	// ErrNotHeld is returned by ForceRelease when the lock has no owner.
	ErrNotHeld = errors.New("monolock: lock is not held")
	// ErrNoSuchWaiter is returned by Kick when no waiter of the lock has the
	// given remote address.
	ErrNoSuchWaiter = errors.New("monolock: no such waiter")
)

// Notifier receives the changes the table makes to a claim on its own.
// Methods are called with the table's mutex held, in the order the changes
// happen; they must not block and must not call back into the table.
type Notifier interface {
	// Promoted is called when a waiting claim becomes the owner. It is not
	// called for a grant returned by Acquire itself.
	Promoted(token uint64)
	// Ended is called when the table removes the claim by itself: the lease
	// expired (Expired) or an administrator removed it (Force). It is not
	// called for Release.
	Ended(reason Reason)
}

// Config holds optional observers of ownership changes. They are called with
// the table's mutex held, so for one lock a release is always observed before
// the grant that follows it; they must not block or call into the table.
type Config struct {
	// OnGrant observes every grant, with the time the claim waited. Nil: none.
	OnGrant func(h Holder, waited time.Duration)
	// OnRelease observes every end of an ownership, with the time it was
	// held and why it ended. Nil: none.
	OnRelease func(h Holder, held time.Duration, reason Reason)
}

// Claim is one session's claim on one lock. The caller fills the exported
// fields, passes the claim to Acquire once, and must not change them
// afterwards. A claim is not reused after it leaves the table.
type Claim struct {
	Session    uint64        // caller's session id, reported in snapshots
	Name       string        // lock name
	Identity   string        // client identity, "" when unknown
	RemoteAddr string        // client address, host:port
	Lease      time.Duration // silence tolerated before the claim ends; > 0
	Notifier   Notifier      // required

	// Guarded by the table's mutex.
	state claimState
	lk    *lock
	prev  *Claim // queue links while waiting
	next  *Claim
	since time.Time // when it was queued; from its grant, when it was granted
	token uint64
	due   int64 // when the lease runs out unless a frame was heard since, on the table's clock
	slot  int32 // index in the table's lease heap; -1 once out of it
	table *Table

	// heard is the last time a valid frame arrived, as nanoseconds on the
	// table's monotonic clock; atomic so that Touch needs no lock.
	heard atomic.Int64
}

type claimState uint8

const (
	stateNew claimState = iota
	stateWaiting
	stateHolding
	stateGone
)

// lock is one name with an owner or waiters. A lock without either is
// deleted from the map.
type lock struct {
	name       string
	owner      *Claim
	head, tail *Claim
	waiting    int
}

// Table is the set of live locks. All methods are safe for concurrent use.
type Table struct {
	cfg   Config
	epoch time.Time // origin of the monotonic clock used for leases

	mu      sync.Mutex
	locks   map[string]*lock
	seq     tokenSequence
	held    int
	waiting int
	closed  bool
	leases  leases
}

// New returns an empty table.
func New(cfg Config) *Table {
	t := &Table{cfg: cfg, epoch: time.Now(), locks: make(map[string]*lock)}
	t.leases.timer = time.AfterFunc(time.Duration(math.MaxInt64), t.expireDue)
	t.leases.timer.Stop()
	t.leases.armed = math.MaxInt64
	return t
}

// clock returns monotonic nanoseconds since the table was made; a wall-clock
// step does not change it.
func (t *Table) clock() int64 { return int64(time.Since(t.epoch)) }

// Acquire enters a claim: it becomes the owner at once when the lock has
// none (granted is true and token is its fencing token), or joins the end of
// the queue. The lease starts now. After Close it returns ErrClosed.
func (t *Table) Acquire(c *Claim) (token uint64, granted bool, err error) {
	if c.Lease <= 0 || c.Notifier == nil {
		panic("locktable: claim without lease or notifier")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, false, ErrClosed
	}
	if c.state != stateNew {
		panic("locktable: claim acquired twice")
	}
	now := time.Now()
	c.table = t
	c.since = now
	heard := t.clock()
	c.heard.Store(heard)
	lk := t.locks[c.Name]
	if lk == nil {
		lk = &lock{name: c.Name}
		t.locks[c.Name] = lk
	}
	c.lk = lk
	c.due = heard + int64(c.Lease)
	t.addLease(c)
	if lk.owner == nil {
		t.grant(c, now)
		return c.token, true, nil
	}
	c.state = stateWaiting
	c.prev = lk.tail
	if lk.tail != nil {
		lk.tail.next = c
	} else {
		lk.head = c
	}
	lk.tail = c
	lk.waiting++
	t.waiting++
	return 0, false, nil
}

// Touch records that a valid frame arrived for the claim now, sliding its
// lease. It takes no lock.
func (c *Claim) Touch() {
	if c.table != nil {
		c.heard.Store(c.table.clock())
	}
}

// Release removes the claim: an owner's ownership ends with reason and the
// head waiter, if any, is promoted (not after Close); a waiter leaves the
// queue. It reports whether the claim was still in the table; releasing a
// claim twice is harmless.
func (t *Table) Release(c *Claim, reason Reason) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.state != stateWaiting && c.state != stateHolding {
		return false
	}
	t.notifyPromoted(t.remove(c, reason))
	return true
}

// ForceRelease ends the ownership of the named lock with reason Force: the
// owner's Notifier gets Ended(Force), then the head waiter is promoted. It
// returns the released token, or ErrNotHeld.
func (t *Table) ForceRelease(name string) (uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lk := t.locks[name]
	if lk == nil || lk.owner == nil {
		return 0, ErrNotHeld
	}
	c := lk.owner
	next := t.remove(c, Force)
	c.Notifier.Ended(Force)
	t.notifyPromoted(next)
	return c.token, nil
}

// Kick removes the first waiter of the named lock whose RemoteAddr is
// remoteAddr; its Notifier gets Ended(Force). The others keep their order.
// It returns ErrNoSuchWaiter when there is none.
func (t *Table) Kick(name, remoteAddr string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	lk := t.locks[name]
	if lk == nil {
		return ErrNoSuchWaiter
	}
	for w := lk.head; w != nil; w = w.next {
		if w.RemoteAddr == remoteAddr {
			t.remove(w, Force)
			w.Notifier.Ended(Force)
			return nil
		}
	}
	return ErrNoSuchWaiter
}

// Close stops the table from granting: Acquire returns ErrClosed and a
// released ownership no longer promotes its head waiter. Claims still in the
// table can be released and still expire.
func (t *Table) Close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// grant makes c the owner of its lock. Caller holds t.mu.
func (t *Table) grant(c *Claim, now time.Time) {
	c.state = stateHolding
	waited := now.Sub(c.since)
	c.since = now
	c.token = t.seq.next(now)
	c.lk.owner = c
	t.held++
	if t.cfg.OnGrant != nil {
		t.cfg.OnGrant(c.holder(), waited)
	}
}

// remove takes a waiting or holding claim out of the table and, when an
// ownership ended and the table is open, grants the lock to the head waiter,
// which it returns so that the caller can notify it after any notification
// of its own. Caller holds t.mu.
func (t *Table) remove(c *Claim, reason Reason) (promoted *Claim) {
	lk := c.lk
	t.removeLease(c)
	switch c.state {
	case stateHolding:
		now := time.Now()
		lk.owner = nil
		t.held--
		c.state = stateGone
		if t.cfg.OnRelease != nil {
			t.cfg.OnRelease(c.holder(), now.Sub(c.since), reason)
		}
		if !t.closed && lk.head != nil {
			promoted = lk.head
			t.unlink(promoted)
			t.grant(promoted, now)
		}
	case stateWaiting:
		t.unlink(c)
		c.state = stateGone
	}
	if lk.owner == nil && lk.head == nil {
		delete(t.locks, lk.name)
	}
	return promoted
}

func (t *Table) notifyPromoted(c *Claim) {
	if c != nil {
		c.Notifier.Promoted(c.token)
	}
}

// unlink takes a waiter out of its queue. Caller holds t.mu.
func (t *Table) unlink(c *Claim) {
	lk := c.lk
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		lk.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		lk.tail = c.prev
	}
	c.prev, c.next = nil, nil
	lk.waiting--
	t.waiting--
}
