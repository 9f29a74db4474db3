// Package guardedstore is the resource a lock is meant to protect, for
// the safety scenario: a small HTTP server in the bench process that takes
// writes (client, lock, token?, payload), runs fenced (it rejects a token
// lower than the highest it has seen for that lock) or unfenced, and keeps
// the full history with monotonic timestamps. Analyze reads a history
// together with the grant timeline from the lock side and counts unsafe
// writes, writes rejected by fencing, overlapping ownership and double
// grants.
package guardedstore

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// Mono is a reading of the host's CLOCK_MONOTONIC in nanoseconds. Unlike
// the monotonic part of a time.Time, which only means something inside
// one process, it is one timeline for the store and every holder process
// on the same host (containers share it too: Docker uses no time
// namespace), so grants measured by separate holder processes can be
// ordered against the writes the store saw. It never jumps with the wall
// clock.
type Mono int64

// Now reads CLOCK_MONOTONIC.
func Now() Mono {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		// CLOCK_MONOTONIC exists on every kernel Go supports.
		panic(fmt.Sprintf("guardedstore: clock_gettime(CLOCK_MONOTONIC): %v", err))
	}
	return Mono(ts.Nano())
}

// Write is one write a client sends to the store.
type Write struct {
	// Client names the writer ("A", "B", a holder's id).
	Client string `json:"client"`
	// Lock is the lock the client believes it holds while writing; the
	// store keeps one fencing high-water mark per lock.
	Lock string `json:"lock"`
	// Token is the fencing token of the client's grant; nil when its lock
	// has none (Redis SET NX, Redlock).
	Token *uint64 `json:"token,omitempty"`
	// Payload is the data written; the store only records it.
	Payload string `json:"payload,omitempty"`
}

// Reasons a fenced store rejects a write, in Entry.Reason.
const (
	// ReasonStale: the token is lower than the highest the store has
	// accepted for the lock, i.e. a later grant has already written.
	ReasonStale = "stale token"
	// ReasonNoToken: a fenced store cannot order a write without a token.
	ReasonNoToken = "no token"
)

// Entry is one write as the store decided it.
type Entry struct {
	Write
	// Seq numbers the entries from 1 in the order the store decided them.
	Seq int64 `json:"seq"`
	// At is when the store decided, on the host's monotonic clock.
	At Mono `json:"at"`
	// Accepted is false when fencing rejected the write.
	Accepted bool `json:"accepted"`
	// Reason says why a write was rejected (ReasonStale, ReasonNoToken).
	Reason string `json:"reason,omitempty"`
	// Highest is the lock's fencing high-water mark after the decision
	// (0 while no token was accepted).
	Highest uint64 `json:"highest"`
}

// Store is the resource's state: its mode, the per-lock high-water marks
// and the history. It is safe for concurrent use; decisions are made one
// at a time, so Seq and At agree on the order.
type Store struct {
	fenced bool

	mu      sync.Mutex
	highest map[string]uint64
	history []Entry
}

// NewStore returns an empty store, fenced or unfenced.
func NewStore(fenced bool) *Store {
	return &Store{fenced: fenced, highest: map[string]uint64{}}
}

// Apply decides w and records it. An unfenced store accepts every write
// (tokens are only recorded); a fenced one rejects a write without a
// token or with a token lower than the highest it accepted for w.Lock.
// An equal token is accepted: the same grant may write many times.
func (s *Store) Apply(w Write) Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := Entry{Write: w, Seq: int64(len(s.history)) + 1, Accepted: true}
	if w.Token != nil {
		t := *w.Token
		e.Write.Token = &t // the caller may reuse its variable
	}
	high := s.highest[w.Lock]
	switch {
	case !s.fenced:
	case w.Token == nil:
		e.Accepted, e.Reason = false, ReasonNoToken
	case *w.Token < high:
		e.Accepted, e.Reason = false, ReasonStale
	}
	if e.Accepted && w.Token != nil && *w.Token > high {
		high = *w.Token
		s.highest[w.Lock] = high
	}
	e.Highest = high
	// Read the clock under the lock: the timestamps then never disagree
	// with the order of decisions.
	e.At = Now()
	s.history = append(s.history, e)
	return e
}

// History returns a copy of every entry so far, in decision order.
func (s *Store) History() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Entry(nil), s.history...)
}
