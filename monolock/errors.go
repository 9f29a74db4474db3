package monolock

import (
	"errors"
	"fmt"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// ErrInvalidConfig is wrapped by the error that every Acquire, Do and
// DoRetry of a Client returns when its Config cannot work (an empty
// Address). New itself does not fail.
var ErrInvalidConfig = errors.New("monolock: invalid Config")

// Conditions that end a session, reported by Lock.Err, and by Do and
// DoRetry when ownership was lost while the function ran (wrapped with
// detail; match them with errors.Is). Before a grant, Acquire, Do and
// DoRetry return a connection's error unchanged instead of
// ErrConnectionClosed (see Acquire).
var (
	// ErrHeartbeatTimeout: no frame confirmed the session for 0.8 × lease,
	// so the client closed the connection before the server could expire
	// the lease.
	ErrHeartbeatTimeout = errors.New("monolock: no confirmation from the server within 0.8 × lease")
	// ErrConnectionClosed: the connection failed or the server closed it
	// without an ERROR frame. The error that reports it also wraps the
	// connection's own error (errors.As finds a *net.OpError, errors.Is
	// io.EOF).
	ErrConnectionClosed = errors.New("monolock: connection closed")
	// ErrProtocolViolation: the server sent something protocol version 1
	// does not allow (an unknown frame type, WAITING after ACQUIRED, a
	// token that changed).
	ErrProtocolViolation = errors.New("monolock: protocol violation")
)

// ServerError is an ERROR frame sent by the server. It matches the
// protocol's canonical error of its code under errors.Is (for example
// protocol.ErrShuttingDown), also for a reason text that carries detail.
type ServerError struct {
	Code   protocol.Code
	Reason string // as sent by the server; may be empty
}

func (e *ServerError) Error() string {
	reason := e.Reason
	if reason == "" {
		reason = e.Code.String()
	}
	return fmt.Sprintf("monolock: server error 0x%02x: %s", uint8(e.Code), reason)
}

// Unwrap returns the canonical *protocol.Error of the code, or for a code
// protocol version 1 does not define, a *protocol.Error with that code and
// a text naming its class, so errors.As always finds a *protocol.Error.
func (e *ServerError) Unwrap() error {
	if c := protocol.CanonicalError(e.Code); c != nil {
		return c
	}
	return &protocol.Error{Code: e.Code, Reason: e.Code.String()}
}

// Temporary reports whether the code is a server condition (code < 0x10:
// reconnecting may succeed) rather than a client error (code >= 0x10: do
// not retry). Codes this client does not know follow their range.
func (e *ServerError) Temporary() bool { return e.Code.Temporary() }

// connError is a failed connection of a session: ErrConnectionClosed and
// the connection's own error, both visible to errors.Is and errors.As.
// Before a grant, Acquire returns err alone, unchanged.
type connError struct {
	what string // the operation that failed, for the message; may be empty
	err  error
}

func (e *connError) Error() string {
	if e.what == "" {
		return ErrConnectionClosed.Error() + ": " + e.err.Error()
	}
	return ErrConnectionClosed.Error() + ": " + e.what + ": " + e.err.Error()
}

func (e *connError) Unwrap() []error { return []error{ErrConnectionClosed, e.err} }

// unwrapConnError returns the connection's own error of a *connError, and
// any other error as it is.
func unwrapConnError(err error) error {
	if ce, ok := err.(*connError); ok {
		return ce.err
	}
	return err
}
