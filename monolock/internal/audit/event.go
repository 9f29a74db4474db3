// Package audit writes the audit log: one JSON object per line for every
// ownership change and every administrative or ACL decision about a lock.
//
// Each line has the fields time (UTC, RFC 3339 with nanoseconds), event,
// lock, identity and remote_addr, plus per event:
//
//	granted        token, wait_ms
//	released       token, held_ms, reason (graceful|expired|io_timeout|force)
//	denied         -
//	force_release  token
//	kick_waiter    -
//
// The log writes events in the order they were enqueued: the order of
// events for one lock (a released before the next granted) is the
// caller's to guarantee, by enqueuing from the lock table's serialized
// transition path, which Log.Enqueue allows since it never blocks.
package audit

import (
	"encoding/json"
	"fmt"
	"time"
)

// Kind is the value of the event field.
type Kind string

// The audit events.
const (
	Granted      Kind = "granted"       // a session became the owner
	Released     Kind = "released"      // an ownership ended
	Denied       Kind = "denied"        // the ACL refused an ACQUIRE
	ForceRelease Kind = "force_release" // an administrator ended an ownership
	KickWaiter   Kind = "kick_waiter"   // an administrator removed a waiter
)

// Release reasons carried by a Released event.
const (
	ReasonGraceful  = "graceful"   // the client closed its connection
	ReasonExpired   = "expired"    // silence exceeded the lease
	ReasonIOTimeout = "io_timeout" // a read of a started frame or a write stalled
	ReasonForce     = "force"      // force-released by an administrator
)

// Event is one audit record. Fields that do not belong to Kind are ignored.
type Event struct {
	Time       time.Time // when it happened; the zero value means "now"
	Kind       Kind
	Lock       string
	Identity   string // empty without mTLS
	RemoteAddr string
	Token      uint64        // Granted, Released, ForceRelease
	Wait       time.Duration // Granted: time spent queued
	Held       time.Duration // Released: time from grant to release
	Reason     string        // Released: one of the Reason constants
}

// record is the JSON shape of a line. Pointers keep a zero wait_ms or token
// on the lines where it belongs and off the others.
type record struct {
	Time       string  `json:"time"`
	Event      Kind    `json:"event"`
	Lock       string  `json:"lock"`
	Identity   string  `json:"identity"`
	RemoteAddr string  `json:"remote_addr"`
	Token      *uint64 `json:"token,omitempty"`
	WaitMS     *int64  `json:"wait_ms,omitempty"`
	HeldMS     *int64  `json:"held_ms,omitempty"`
	Reason     string  `json:"reason,omitempty"`
}

// timeFormat is RFC 3339 with a fixed nine-digit fraction, so lines sort
// and align as text.
const timeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// appendLine appends e as one JSON line ending in '\n'.
func appendLine(b []byte, e Event) ([]byte, error) {
	r := record{
		Time:       e.Time.UTC().Format(timeFormat),
		Event:      e.Kind,
		Lock:       e.Lock,
		Identity:   e.Identity,
		RemoteAddr: e.RemoteAddr,
	}
	switch e.Kind {
	case Granted:
		wait := e.Wait.Milliseconds()
		r.Token, r.WaitMS = &e.Token, &wait
	case Released:
		if e.Reason == "" {
			return b, fmt.Errorf("audit: released event for %q without a reason", e.Lock)
		}
		held := e.Held.Milliseconds()
		r.Token, r.HeldMS, r.Reason = &e.Token, &held, e.Reason
	case ForceRelease:
		r.Token = &e.Token
	case Denied, KickWaiter:
	default:
		return b, fmt.Errorf("audit: unknown event kind %q", e.Kind)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return b, fmt.Errorf("audit: %w", err)
	}
	b = append(b, line...)
	return append(b, '\n'), nil
}
