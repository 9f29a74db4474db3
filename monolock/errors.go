package monolock

import (
	"errors"
	"fmt"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// Conditions that end a session, reported by Lock.Err, Acquire, Do and
// DoRetry (wrapped with detail; match them with errors.Is).
var (
	// ErrHeartbeatTimeout: no frame confirmed the session for 0.8 × lease,
	// so the client closed the connection before the server could expire
	// the lease.
	ErrHeartbeatTimeout = errors.New("monolock: no confirmation from the server within 0.8 × lease")
	// ErrConnectionClosed: the connection failed or the server closed it
	// without an ERROR frame.
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
