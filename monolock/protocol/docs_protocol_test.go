package protocol

// The contract of the public docs pages reference/protocol.md (the frames
// byte by byte) and reference/errors.mdx (the code table, its canonical
// texts and the retry contract by range).

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestDocsFrames(t *testing.T) {
	for _, tt := range []struct {
		name string
		got  []byte
		want string // hex
	}{
		// ACQUIRE [0x01][version uint8][lease_ms uint32][name_len uint16][name]
		{"ACQUIRE nightly-import 2s", AppendAcquire(nil, 2000, "nightly-import"), "01" + "01" + "000007d0" + "000e" + hex.EncodeToString([]byte("nightly-import"))},
		{"HEARTBEAT", AppendHeartbeat(nil), "02"},
		{"WAITING", AppendWaiting(nil), "11"},
		// ACQUIRED [0x12][token uint64], big endian
		{"ACQUIRED 41", AppendAcquired(nil, 41), "12" + "0000000000000029"},
		// ERROR [0x13][code uint8][reason_len uint8][reason]
		{"ERROR 0x7f detail", AppendError(nil, CodeUnknownType, "unknown message type: 0x7f"), "13" + "13" + "1a" + hex.EncodeToString([]byte("unknown message type: 0x7f"))},
		{"ERROR empty reason", AppendError(nil, CodeShuttingDown, ""), "130100"},
	} {
		if got := hex.EncodeToString(tt.got); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.name, got, tt.want)
		}
	}
	// The name limit is 255 bytes; a longer name_len is representable on
	// the wire and answered with 0x15; an empty name is 0x14, invalid
	// UTF-8 0x16, lease 0 is 0x17, another version 0x10.
	for _, tt := range []struct {
		name  string
		frame []byte
		want  error
	}{
		{"256-byte name", AppendAcquire(nil, 1, strings.Repeat("n", 256))[1:], ErrNameTooLong},
		{"empty name", AppendAcquire(nil, 1, "")[1:], ErrEmptyName},
		{"invalid UTF-8", AppendAcquire(nil, 1, "a\xff")[1:], ErrInvalidName},
		{"lease 0", AppendAcquire(nil, 0, "a")[1:], ErrInvalidLease},
		{"version 2", append([]byte{2}, AppendAcquire(nil, 1, "a")[2:]...), ErrUnsupportedVersion},
	} {
		if _, err := ReadAcquire(bytes.NewReader(tt.frame)); !errors.Is(err, tt.want) {
			t.Errorf("%s: ReadAcquire = %v, want %v", tt.name, err, tt.want)
		}
	}
	if a, err := ReadAcquire(bytes.NewReader(AppendAcquire(nil, 1, strings.Repeat("n", 255))[1:])); err != nil || len(a.Name) != 255 {
		t.Errorf("255-byte name: %v", err)
	}
}

func TestDocsErrorCodes(t *testing.T) {
	table := []struct {
		code    Code
		meaning string
		err     *Error
	}{
		{0x01, "server shutting down", ErrShuttingDown},
		{0x02, "closed by administrator", ErrClosedByAdmin},
		{0x10, "unsupported protocol version", ErrUnsupportedVersion},
		{0x11, "first message must be ACQUIRE", ErrFirstNotAcquire},
		{0x12, "duplicate ACQUIRE", ErrDuplicateAcquire},
		{0x13, "unknown message type", ErrUnknownType},
		{0x14, "empty lock name", ErrEmptyName},
		{0x15, "lock name too long (> 255 bytes)", ErrNameTooLong},
		{0x16, "lock name is not valid UTF-8", ErrInvalidName},
		{0x17, "lease must be positive", ErrInvalidLease},
		{0x18, "not authorized for lock", ErrNotAuthorized},
	}
	for _, tt := range table {
		if tt.err.Code != tt.code || tt.err.Reason != tt.meaning || CanonicalError(tt.code) != tt.err {
			t.Errorf("code 0x%02x: %+v, want %q", uint8(tt.code), tt.err, tt.meaning)
		}
	}
	// The retry contract is a range, not a list: unknown codes follow it.
	for c := range 256 {
		if got, want := Code(c).Temporary(), c < 0x10; got != want {
			t.Errorf("code 0x%02x: Temporary = %v, want %v", c, got, want)
		}
	}
	// The reason may carry detail; the code decides.
	if !errors.Is(&Error{CodeUnknownType, "unknown message type: 0x7f"}, ErrUnknownType) {
		t.Error("a detailed reason does not match its code's error")
	}
}
