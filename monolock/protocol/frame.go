package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// Version is the only protocol version this package speaks. There is no
// negotiation: any other version is answered with CodeUnsupportedVersion.
const Version = 1

// MaxNameLen is the longest lock name in bytes. It is a protocol constant,
// not a setting.
const MaxNameLen = 255

// Type is the first byte of every frame.
type Type uint8

// Frame types. Client → server: Acquire, Heartbeat. Server → client:
// Waiting, Acquired, Error.
const (
	TypeAcquire   Type = 0x01
	TypeHeartbeat Type = 0x02
	TypeWaiting   Type = 0x11
	TypeAcquired  Type = 0x12
	TypeError     Type = 0x13
)

// Frame sizes that do not depend on content.
const (
	acquireHeaderLen = 1 + 1 + 4 + 2 // type, version, lease_ms, name_len
	AcquiredLen      = 1 + 8         // type, token
)

// Acquire is the first frame of every connection.
type Acquire struct {
	Version uint8
	LeaseMS uint32
	Name    string
}

// Lease returns the lease as a duration.
func (a Acquire) Lease() time.Duration { return time.Duration(a.LeaseMS) * time.Millisecond }

// ValidateName checks a lock name: 1..MaxNameLen bytes of valid UTF-8. Names
// are case-sensitive and never trimmed or normalised.
func ValidateName(name string) error {
	switch {
	case name == "":
		return ErrEmptyName
	case len(name) > MaxNameLen:
		return &Error{CodeNameTooLong, fmt.Sprintf("lock name too long: %d bytes > %d", len(name), MaxNameLen)}
	case !utf8.ValidString(name):
		return ErrInvalidName
	}
	return nil
}

// LeaseMillis converts a lease to whole milliseconds for the wire. A lease
// that is not positive, that rounds down to zero milliseconds, or that is
// beyond the u32 range of lease_ms (about 49.7 days) is ErrInvalidLease
// (under errors.Is), with the value in the reason.
func LeaseMillis(lease time.Duration) (uint32, error) {
	ms := lease.Milliseconds()
	switch {
	case ms <= 0:
		return 0, &Error{CodeInvalidLease, fmt.Sprintf("lease must be positive and at least 1ms, got %v", lease)}
	case ms > 1<<32-1:
		return 0, &Error{CodeInvalidLease, fmt.Sprintf("lease %v exceeds the protocol maximum of %v", lease, time.Duration(1<<32-1)*time.Millisecond)}
	}
	return uint32(ms), nil
}

// AppendAcquire appends an ACQUIRE frame. It does not validate; callers that
// build frames for a server validate first (ValidateName, LeaseMillis).
func AppendAcquire(b []byte, leaseMS uint32, name string) []byte {
	b = append(b, byte(TypeAcquire), Version)
	b = binary.BigEndian.AppendUint32(b, leaseMS)
	b = binary.BigEndian.AppendUint16(b, uint16(len(name)))
	return append(b, name...)
}

// AppendHeartbeat appends a HEARTBEAT frame.
func AppendHeartbeat(b []byte) []byte { return append(b, byte(TypeHeartbeat)) }

// AppendWaiting appends a WAITING frame.
func AppendWaiting(b []byte) []byte { return append(b, byte(TypeWaiting)) }

// AppendAcquired appends an ACQUIRED frame carrying token.
func AppendAcquired(b []byte, token uint64) []byte {
	b = append(b, byte(TypeAcquired))
	return binary.BigEndian.AppendUint64(b, token)
}

// AppendError appends an ERROR frame. A reason longer than 255 bytes is cut
// at a UTF-8 boundary so the frame stays valid.
func AppendError(b []byte, code Code, reason string) []byte {
	if len(reason) > 255 {
		cut := 255
		for cut > 0 && !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut]
	}
	b = append(b, byte(TypeError), byte(code), byte(len(reason)))
	return append(b, reason...)
}

// ReadType reads the type byte that starts every frame.
func ReadType(r io.Reader) (Type, error) {
	if br, ok := r.(io.ByteReader); ok { // no scratch byte escaping to the heap
		b, err := br.ReadByte()
		return Type(b), err
	}
	var b [1]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return Type(b[0]), nil
}

// peeker is what a *bufio.Reader offers to read a fixed-size field in
// place: the scratch array that io.ReadFull needs escapes to the heap, one
// allocation per field on every frame.
type peeker interface {
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	Size() int // the buffer's size: the most Peek can return
}

// readField reads exactly n bytes (at most 8, or with a peeker at most its
// Size), the rest of a started frame, and passes them to use; a clean EOF
// is io.ErrUnexpectedEOF.
func readField(r io.Reader, n int, use func([]byte)) error {
	if p, ok := r.(peeker); ok {
		b, err := p.Peek(n)
		if err != nil {
			return eofIsUnexpected(err)
		}
		use(b)
		p.Discard(n)
		return nil
	}
	var b [8]byte
	if _, err := io.ReadFull(r, b[:n]); err != nil {
		return eofIsUnexpected(err)
	}
	use(b[:n])
	return nil
}

// ReadAcquire reads the body of an ACQUIRE frame whose type byte has already
// been read, and validates it. A protocol violation is returned as an *Error
// carrying the code to answer with; an I/O failure is returned as is.
//
// A name longer than MaxNameLen is still read in full (at most 65,535 bytes)
// so that the ERROR answer is not lost to a reset caused by unread input.
// An unsupported version is reported without reading further, since the
// layout of the rest is unknown.
func ReadAcquire(r io.Reader) (Acquire, error) {
	var a Acquire
	if err := readField(r, 1, func(v []byte) { a.Version = v[0] }); err != nil {
		return a, err
	}
	if a.Version != Version {
		return a, &Error{CodeUnsupportedVersion, fmt.Sprintf("unsupported protocol version %d (server speaks %d)", a.Version, Version)}
	}
	var nameLen uint16
	if err := readField(r, 6, func(h []byte) { a.LeaseMS, nameLen = binary.BigEndian.Uint32(h[0:4]), binary.BigEndian.Uint16(h[4:6]) }); err != nil {
		return a, err
	}
	if p, ok := r.(peeker); ok && int(nameLen) <= p.Size() {
		// In place: the string is the only copy.
		if err := readField(r, int(nameLen), func(b []byte) { a.Name = string(b) }); err != nil {
			return a, err
		}
	} else {
		name := make([]byte, nameLen)
		if _, err := io.ReadFull(r, name); err != nil {
			return a, eofIsUnexpected(err)
		}
		a.Name = string(name)
	}
	if err := ValidateName(a.Name); err != nil {
		return a, err
	}
	if a.LeaseMS == 0 {
		return a, ErrInvalidLease
	}
	return a, nil
}

// ServerFrame is one decoded server → client frame.
type ServerFrame struct {
	Type   Type   // TypeWaiting, TypeAcquired or TypeError
	Token  uint64 // TypeAcquired only
	Code   Code   // TypeError only
	Reason string // TypeError only
}

// ErrUnknownFrame is returned by ReadServerFrame for a type byte that is not
// a server frame of protocol version 1.
var ErrUnknownFrame = errors.New("monolock: unknown server frame type")

// ReadServerFrame reads one complete server → client frame.
func ReadServerFrame(r io.Reader) (ServerFrame, error) {
	t, err := ReadType(r)
	if err != nil {
		return ServerFrame{}, err
	}
	f := ServerFrame{Type: t}
	switch t {
	case TypeWaiting:
	case TypeAcquired:
		if err := readField(r, 8, func(b []byte) { f.Token = binary.BigEndian.Uint64(b) }); err != nil {
			return f, err
		}
	case TypeError:
		var h [2]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return f, eofIsUnexpected(err)
		}
		reason := make([]byte, h[1])
		if _, err := io.ReadFull(r, reason); err != nil {
			return f, eofIsUnexpected(err)
		}
		f.Code, f.Reason = Code(h[0]), string(reason)
	default:
		return f, fmt.Errorf("%w: 0x%02x", ErrUnknownFrame, uint8(t))
	}
	return f, nil
}

// eofIsUnexpected turns a clean EOF inside a started frame into
// io.ErrUnexpectedEOF: the peer stopped mid-frame.
func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
