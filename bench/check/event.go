package check

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Mono is a reading of the host's CLOCK_MONOTONIC in nanoseconds: one
// timeline for every process on the host (containers too: Docker uses no
// time namespace), unlike the monotonic part of a time.Time, which only
// means something inside one process. It never jumps with the wall clock.
type Mono int64

// Now reads CLOCK_MONOTONIC.
func Now() Mono {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		// CLOCK_MONOTONIC exists on every kernel Go supports.
		panic(fmt.Sprintf("check: clock_gettime(CLOCK_MONOTONIC): %v", err))
	}
	return Mono(ts.Nano())
}

// Type says what an event is: a phase of an operation, a notice, or a
// phase of a fault.
type Type string

// Types of events.
const (
	// Invoke: a client process starts an operation.
	Invoke Type = "invoke"
	// OK: the operation completed and its result is known.
	OK Type = "ok"
	// Fail: the operation certainly had no effect.
	Fail Type = "fail"
	// Info: the operation's outcome is unknown (a timeout, a connection
	// lost mid-request): it may have taken effect at any time after its
	// invocation. An operation that never completes counts the same.
	Info Type = "info"
	// Notice: something the client learned on its own (FuncLost).
	Notice Type = "notice"
	// Start: a fault was applied (t is taken just before applying it).
	Start Type = "start"
	// End: a fault was healed (t is taken once healing completed).
	End Type = "end"
	// FaultFailed: applying a fault failed; it is not a fault of the run.
	FaultFailed Type = "fault-failed"
	// Skip: the contender or backend cannot do the fault's kind.
	Skip Type = "skip"
	// Server: what a lock server did with the lock's key, as a watcher of
	// the server saw it (ServerGrant, ServerRenew, ServerEnd), or the
	// watch itself starting or breaking (Watching, Unwatched).
	Server Type = "server"
)

// Func is what an operation or event does.
type Func string

// Functions of events.
const (
	// Acquire: ask for the lock; OK carries the grant's token, if any.
	Acquire Func = "acquire"
	// Release: give the lock back. Its invocation ends the client's belief
	// that it holds the lock.
	Release Func = "release"
	// Write: write Value to the store's register, with Token if any; OK
	// carries Accepted.
	Write Func = "write"
	// Read: read the store's register; OK carries Value ("" while nothing
	// was written).
	Read Func = "read"
	// Increment: read the store's counter and write it back plus one, with
	// Token if any; OK carries Read, Wrote and Accepted.
	Increment Func = "increment"
	// ReadCounter: read the store's counter; OK carries Read. The last one
	// in the history is the counter's final value.
	ReadCounter Func = "read-counter"
	// Lost: a Notice that the client learned it no longer holds the lock
	// it was granted.
	Lost Func = "lost"
	// FuncFault: a fault of the nemesis; the event carries Fault.
	FuncFault Func = "fault"
	// ServerGrant: the server made Key's holder the owner of the lock.
	ServerGrant Func = "grant"
	// ServerRenew: the server extended the owner's lease (TTLMS is what
	// it has left).
	ServerRenew Func = "renew"
	// ServerEnd: the server ended the owner's hold: a release or a lease
	// expiry (Cause says which, where the server tells).
	ServerEnd Func = "end"
	// Watching: the watcher's subscription is confirmed; from here on it
	// sees every change of the key on the server until Unwatched.
	Watching Func = "watching"
	// Unwatched: the watch broke (Error says why); changes until the next
	// Watching are not seen.
	Unwatched Func = "unwatched"
)

// NemesisProcess is the process name of fault events.
const NemesisProcess = "nemesis"

// Event is one line of a history. Which fields are set depends on Type and
// F (see the package documentation); a completion needs only its results,
// the arguments are the invocation's.
type Event struct {
	// T is when the event happened, on CLOCK_MONOTONIC.
	T Mono `json:"t"`
	// Process names the client process ("c1"), NemesisProcess, or the
	// harness's own reader of final values ("final").
	Process string `json:"process"`
	Type    Type   `json:"type"`
	F       Func   `json:"f"`
	// ID numbers a process's operations from 1; an operation's invocation
	// and completion share it. Faults carry their number in the
	// schedule; notices 0.
	ID    int64  `json:"id"`
	Store string `json:"store,omitempty"`
	// Token is the grant's fencing token (Acquire OK), or the token sent
	// with an operation on a store (Write, Read, Increment invocations);
	// absent without one.
	Token *uint64 `json:"token,omitempty"`
	// Value is the register value written (Write invocation) or read (Read
	// OK).
	Value *string `json:"value,omitempty"`
	// Accepted is whether the store took the write (Write and Increment
	// OK).
	Accepted *bool `json:"accepted,omitempty"`
	// Read and Wrote are the counter value read and the value written
	// (Increment; Read also ReadCounter OK).
	Read  *int64 `json:"read,omitempty"`
	Wrote *int64 `json:"wrote,omitempty"`
	// WriteT is when an Increment's write left (OK, and Info when it was
	// sent), after its read and a wait: the time its staleness is judged
	// at. Absent in histories recorded before it existed, and when the
	// write was never sent.
	WriteT *Mono `json:"write_t,omitempty"`
	// Error says why an operation failed or is unknown, why a fault could
	// not be applied or was skipped.
	Error string `json:"error,omitempty"`
	// Fault describes a fault (F == FuncFault).
	Fault *Fault `json:"fault,omitempty"`
	// AckT is, on a client pause's Start and End, when the signal was
	// seen to take effect: the process shown stopped after SIGSTOP, shown
	// running after SIGCONT; T is then when the signal was sent. Absent
	// for other faults, when it was not seen, and in histories recorded
	// before it existed.
	AckT *Mono `json:"ack_t,omitempty"`
	// Key is the server's key of a server event (etcd: the holder's own
	// key under the lock's prefix; Redis: the lock's key).
	Key string `json:"key,omitempty"`
	// Rev is the server's revision of a server event (etcd), the server's
	// own order of its changes; 0 when it has none.
	Rev int64 `json:"rev,omitempty"`
	// TTLMS is, on a server grant or renewal, the lease's remaining time
	// read back from the server right after the change was seen (Redis
	// PTTL); absent when not read.
	TTLMS *int64 `json:"ttl_ms,omitempty"`
	// Cause is why a server end happened, where the server tells
	// ("del": deleted by a client, "expired": the TTL ran out).
	Cause string `json:"cause,omitempty"`
}

// Fault describes one fault in a history.
type Fault struct {
	// Kind is the nemesis's name of the fault ("client-pause").
	Kind string `json:"kind"`
	// Target names what the fault acts on: a client process ("c2") or a
	// server ("redis-3").
	Target string `json:"target,omitempty"`
	// Direction is the direction a one-sided partition drops.
	Direction string `json:"direction,omitempty"`
	// StepNS is a clock step's size in nanoseconds.
	StepNS int64 `json:"step_ns,omitempty"`
}

// ErrBadEvent is wrapped by errors about an event that breaks the format.
var ErrBadEvent = errors.New("check: bad event")

// clientFuncs are the functions of client operations.
var clientFuncs = map[Func]bool{Acquire: true, Release: true, Write: true, Read: true, Increment: true, ReadCounter: true}

// serverFuncs are the functions of server events.
var serverFuncs = map[Func]bool{ServerGrant: true, ServerRenew: true, ServerEnd: true, Watching: true, Unwatched: true}

// storeFuncs are the operations on a store.
var storeFuncs = map[Func]bool{Write: true, Read: true, Increment: true, ReadCounter: true}

// validate checks what one event must carry on its own; pairing is
// checked by NewHistory.
func (e Event) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadEvent, fmt.Sprintf(format, args...))
	}
	switch {
	case e.T <= 0:
		return bad("t %d is not a CLOCK_MONOTONIC reading", e.T)
	case e.Process == "":
		return bad("no process")
	}
	switch e.Type {
	case Invoke, OK, Fail, Info:
		if !clientFuncs[e.F] {
			return bad("%s of %q, want a client operation", e.Type, e.F)
		}
		if e.ID <= 0 {
			return bad("%s %s with id %d, want 1 or more", e.F, e.Type, e.ID)
		}
		if storeFuncs[e.F] && e.Type == Invoke && e.Store == "" {
			return bad("%s without a store", e.F)
		}
	case Notice:
		if e.F != Lost {
			return bad("notice of %q, want %q", e.F, Lost)
		}
	case Start, End, FaultFailed, Skip:
		if e.F != FuncFault || e.Fault == nil || e.Fault.Kind == "" {
			return bad("%s without a fault and its kind", e.Type)
		}
	case Server:
		if !serverFuncs[e.F] {
			return bad("server event of %q, want grant, renew, end, watching or unwatched", e.F)
		}
		if e.Key == "" && e.F != Watching && e.F != Unwatched {
			return bad("server %s without a key", e.F)
		}
	default:
		return bad("unknown type %q", e.Type)
	}
	switch {
	case e.Type == Invoke && e.F == Write && e.Value == nil:
		return bad("write without a value")
	case e.Type == OK && (e.F == Write || e.F == Increment) && e.Accepted == nil:
		return bad("%s ok without accepted", e.F)
	case e.Type == OK && e.F == Read && e.Value == nil:
		return bad("read ok without a value")
	case e.Type == OK && e.F == ReadCounter && e.Read == nil:
		return bad("read-counter ok without read")
	case e.Type == OK && e.F == Increment && (e.Read == nil || e.Wrote == nil):
		return bad("increment ok without read and wrote")
	case e.WriteT != nil && (e.F != Increment || e.Type != OK && e.Type != Info):
		return bad("write_t on %s %s, want an increment's ok or info", e.F, e.Type)
	case e.Type != Server && (e.Key != "" || e.Rev != 0 || e.TTLMS != nil || e.Cause != ""):
		return bad("key, rev, ttl_ms or cause on a %s event, want a server event", e.Type)
	case e.AckT != nil && (e.Type != Start && e.Type != End || *e.AckT < e.T):
		return bad("ack_t %d on %s at %d, want a fault's start or end, not before it", *e.AckT, e.Type, e.T)
	}
	return nil
}
