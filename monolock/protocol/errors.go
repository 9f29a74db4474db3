package protocol

import "fmt"

// Code is the code carried by an ERROR frame. The code is the contract; the
// reason text is for humans.
type Code uint8

// Error codes of protocol version 1. Codes below 0x10 are server conditions
// (the client may reconnect); codes from 0x10 are client errors (report, do
// not retry). Unknown codes follow their range.
const (
	CodeShuttingDown       Code = 0x01
	CodeClosedByAdmin      Code = 0x02
	CodeUnsupportedVersion Code = 0x10
	CodeFirstNotAcquire    Code = 0x11
	CodeDuplicateAcquire   Code = 0x12
	CodeUnknownType        Code = 0x13
	CodeEmptyName          Code = 0x14
	CodeNameTooLong        Code = 0x15
	CodeInvalidName        Code = 0x16
	CodeInvalidLease       Code = 0x17
	CodeNotAuthorized      Code = 0x18
)

// Temporary reports whether the code is a server condition (< 0x10), after
// which a client may reconnect, rather than a client error.
func (c Code) Temporary() bool { return c < 0x10 }

// String returns the canonical text of a known code, or a generic text that
// names the code's class for an unknown one.
func (c Code) String() string {
	if e := CanonicalError(c); e != nil {
		return e.Reason
	}
	if c.Temporary() {
		return fmt.Sprintf("unknown server condition 0x%02x", uint8(c))
	}
	return fmt.Sprintf("unknown client error 0x%02x", uint8(c))
}

// Error is a protocol error: a code and a human-readable reason. Two Errors
// match under errors.Is when their codes are equal, so a detailed error such
// as &Error{CodeUnknownType, "unknown message type: 0x7f"} is ErrUnknownType.
type Error struct {
	Code   Code
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("monolock: %s (code 0x%02x)", e.Reason, uint8(e.Code))
}

// Is matches any *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Temporary reports whether the error is a server condition.
func (e *Error) Temporary() bool { return e.Code.Temporary() }

// The canonical error of each known code.
var (
	ErrShuttingDown       = &Error{CodeShuttingDown, "server shutting down"}
	ErrClosedByAdmin      = &Error{CodeClosedByAdmin, "closed by administrator"}
	ErrUnsupportedVersion = &Error{CodeUnsupportedVersion, "unsupported protocol version"}
	ErrFirstNotAcquire    = &Error{CodeFirstNotAcquire, "first message must be ACQUIRE"}
	ErrDuplicateAcquire   = &Error{CodeDuplicateAcquire, "duplicate ACQUIRE"}
	ErrUnknownType        = &Error{CodeUnknownType, "unknown message type"}
	ErrEmptyName          = &Error{CodeEmptyName, "empty lock name"}
	ErrNameTooLong        = &Error{CodeNameTooLong, "lock name too long (> 255 bytes)"}
	ErrInvalidName        = &Error{CodeInvalidName, "lock name is not valid UTF-8"}
	ErrInvalidLease       = &Error{CodeInvalidLease, "lease must be positive"}
	ErrNotAuthorized      = &Error{CodeNotAuthorized, "not authorized for lock"}
)

// CanonicalError returns the canonical error of a known code, or nil.
func CanonicalError(c Code) *Error {
	switch c {
	case CodeShuttingDown:
		return ErrShuttingDown
	case CodeClosedByAdmin:
		return ErrClosedByAdmin
	case CodeUnsupportedVersion:
		return ErrUnsupportedVersion
	case CodeFirstNotAcquire:
		return ErrFirstNotAcquire
	case CodeDuplicateAcquire:
		return ErrDuplicateAcquire
	case CodeUnknownType:
		return ErrUnknownType
	case CodeEmptyName:
		return ErrEmptyName
	case CodeNameTooLong:
		return ErrNameTooLong
	case CodeInvalidName:
		return ErrInvalidName
	case CodeInvalidLease:
		return ErrInvalidLease
	case CodeNotAuthorized:
		return ErrNotAuthorized
	}
	return nil
}
