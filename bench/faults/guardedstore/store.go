// Package guardedstore is the resource a lock is meant to protect, for
// the safety and chaos scenarios: a small HTTP server in the bench process
// that takes writes (client, lock, token?, payload) and reads, runs fenced
// (it rejects a token lower than the highest it has seen for that name)
// or unfenced, and keeps the history of writes with monotonic timestamps.
// Analyze reads a history together with the grant timeline from the lock
// side and counts unsafe writes, writes rejected by fencing, overlapping
// ownership and double grants.
//
// Each name (Write.Lock) is a register: a read returns the payload of its
// last accepted write ("" before any). The chaos scenario keeps a register
// and a counter (a number as text) per store under the names
// "<key>/register" and "<key>/counter", each with its own high-water mark.
//
// Fencing and reads: fencing writes alone does not keep a stale holder
// out. If the old holder's write lands after the new holder's grant but
// before the new holder's first write, the store has not seen the newer
// token yet and accepts it; a read-then-write increment of the new holder
// that read before that stale write then loses it. So a fenced store
// takes a read's token too and raises the name's high-water mark with it
// ("the storage server remembers the highest token", Kleppmann): once the
// new holder has read, every later operation of the old one is rejected.
// That is what a careful user of a fenced resource does; the unfenced
// store ignores tokens on reads as on writes.
package guardedstore

import (
	"sync"

	"github.com/monolock/monolock-bench/bench/check"
)

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

// Reasons a fenced store rejects a write or a read, in Entry.Reason and
// ReadResult.Reason.
const (
	// ReasonStale: the token is lower than the highest the store has
	// accepted for the lock, i.e. a later grant has already written.
	ReasonStale = "stale token"
	// ReasonNoToken: a fenced store cannot order an operation without a
	// token.
	ReasonNoToken = "no token"
)

// Entry is one write as the store decided it.
type Entry struct {
	Write
	// Seq numbers the entries from 1 in the order the store decided them.
	Seq int64 `json:"seq"`
	// At is when the store decided, on the host's monotonic clock.
	At check.Mono `json:"at"`
	// Accepted is false when fencing rejected the write.
	Accepted bool `json:"accepted"`
	// Reason says why a write was rejected (ReasonStale, ReasonNoToken).
	Reason string `json:"reason,omitempty"`
	// Highest is the lock's fencing high-water mark after the decision
	// (0 while no token was accepted).
	Highest uint64 `json:"highest"`
}

// Read is one read a client sends to the store: the register of Lock.
type Read struct {
	Client string `json:"client"`
	Lock   string `json:"lock"`
	// Token is the fencing token of the reader's grant; nil without one.
	// A fenced store raises the lock's high-water mark to it.
	Token *uint64 `json:"token,omitempty"`
}

// ReadResult is a read as the store decided it.
type ReadResult struct {
	// Value is the payload of the lock's last accepted write, "" before
	// any (and when the read was rejected).
	Value string `json:"value"`
	// Accepted is false when fencing rejected the read; Reason says why
	// (ReasonStale, ReasonNoToken).
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason,omitempty"`
	// Highest is the lock's fencing high-water mark after the read.
	Highest uint64 `json:"highest"`
	// At is when the store decided, on the host's monotonic clock.
	At check.Mono `json:"at"`
}

// Store is the resource's state: its mode, the per-lock high-water marks
// and values, and the history of writes (reads are not kept in it). It is
// safe for concurrent use; decisions are made one at a time, so Seq and At
// agree on the order.
type Store struct {
	fenced bool

	mu      sync.Mutex
	highest map[string]uint64
	values  map[string]string
	history []Entry
}

// NewStore returns an empty store, fenced or unfenced.
func NewStore(fenced bool) *Store {
	return &Store{fenced: fenced, highest: map[string]uint64{}, values: map[string]string{}}
}

// Fenced reports whether the store fences.
func (s *Store) Fenced() bool { return s.fenced }

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
	if e.Accepted {
		s.values[w.Lock] = w.Payload
	}
	e.Highest = high
	// Read the clock under the lock: the timestamps then never disagree
	// with the order of decisions.
	e.At = check.Now()
	s.history = append(s.history, e)
	return e
}

// Read decides r: the lock's value, "" before any accepted write. An
// unfenced store answers every read; a fenced one rejects a read without a
// token or with a token lower than the lock's high-water mark, and raises
// the mark to the token of a read it answers (see the package
// documentation).
func (s *Store) Read(r Read) ReadResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := ReadResult{Accepted: true}
	high := s.highest[r.Lock]
	switch {
	case !s.fenced:
	case r.Token == nil:
		res.Accepted, res.Reason = false, ReasonNoToken
	case *r.Token < high:
		res.Accepted, res.Reason = false, ReasonStale
	default:
		high = *r.Token
		s.highest[r.Lock] = high
	}
	if res.Accepted {
		res.Value = s.values[r.Lock]
	}
	res.Highest = high
	res.At = check.Now()
	return res
}

// Last returns the lock's value without any fencing and without moving
// its mark: the harness's own read of a final value.
func (s *Store) Last(lock string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.values[lock]
}

// History returns a copy of every entry so far, in decision order.
func (s *Store) History() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Entry(nil), s.history...)
}
