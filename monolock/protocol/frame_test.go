package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestAcquireRoundTripOneByteAtATime(t *testing.T) {
	for _, name := range []string{"a", "jobs/nightly", "Ünïcode ✓", strings.Repeat("x", MaxNameLen), " padded "} {
		frame := AppendAcquire(nil, 2000, name)
		r := iotest.OneByteReader(bytes.NewReader(frame))
		typ, err := ReadType(r)
		if err != nil || typ != TypeAcquire {
			t.Fatalf("ReadType = %v, %v", typ, err)
		}
		a, err := ReadAcquire(r)
		if err != nil {
			t.Fatalf("ReadAcquire(%q): %v", name, err)
		}
		if a.Name != name || a.LeaseMS != 2000 || a.Version != Version {
			t.Fatalf("got %+v, want name %q lease 2000", a, name)
		}
		if a.Lease() != 2*time.Second {
			t.Fatalf("Lease() = %v", a.Lease())
		}
	}
}

func acquireBody(version uint8, lease uint32, nameLen uint16, name string) []byte {
	b := []byte{version}
	b = binary.BigEndian.AppendUint32(b, lease)
	b = binary.BigEndian.AppendUint16(b, nameLen)
	return append(b, name...)
}

func TestReadAcquireErrors(t *testing.T) {
	long := strings.Repeat("n", MaxNameLen+1)
	tests := []struct {
		name string
		body []byte
		want error
	}{
		{"unsupported version 0", acquireBody(0, 1000, 1, "a"), ErrUnsupportedVersion},
		{"unsupported version 2", acquireBody(2, 1000, 1, "a"), ErrUnsupportedVersion},
		{"empty name", acquireBody(1, 1000, 0, ""), ErrEmptyName},
		{"name too long", acquireBody(1, 1000, uint16(len(long)), long), ErrNameTooLong},
		{"invalid utf-8", acquireBody(1, 1000, 2, "\xff\xfe"), ErrInvalidName},
		{"zero lease", acquireBody(1, 0, 1, "a"), ErrInvalidLease},
		{"truncated header", []byte{1, 0, 0}, io.ErrUnexpectedEOF},
		{"truncated name", acquireBody(1, 1000, 5, "ab"), io.ErrUnexpectedEOF},
		{"nothing after type", nil, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadAcquire(bytes.NewReader(tt.body))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestLongNameIsReadInFull(t *testing.T) {
	long := strings.Repeat("n", 1000)
	r := bytes.NewReader(append(acquireBody(1, 1000, uint16(len(long)), long), byte(TypeHeartbeat)))
	if _, err := ReadAcquire(r); !errors.Is(err, ErrNameTooLong) {
		t.Fatalf("err = %v", err)
	}
	if r.Len() != 1 {
		t.Fatalf("%d bytes left unread, want only the next frame", r.Len())
	}
}

func TestServerFramesRoundTrip(t *testing.T) {
	var stream []byte
	stream = AppendWaiting(stream)
	stream = AppendAcquired(stream, 1<<40+7)
	stream = AppendError(stream, CodeUnknownType, "unknown message type: 0x7f")
	stream = AppendError(stream, Code(0x42), "")
	want := []ServerFrame{
		{Type: TypeWaiting},
		{Type: TypeAcquired, Token: 1<<40 + 7},
		{Type: TypeError, Code: CodeUnknownType, Reason: "unknown message type: 0x7f"},
		{Type: TypeError, Code: 0x42},
	}
	r := iotest.OneByteReader(bytes.NewReader(stream))
	for i, w := range want {
		got, err := ReadServerFrame(r)
		if err != nil || got != w {
			t.Fatalf("frame %d = %+v, %v; want %+v", i, got, err, w)
		}
	}
	if _, err := ReadServerFrame(r); err != io.EOF {
		t.Fatalf("after last frame err = %v, want io.EOF", err)
	}
}

func TestReadServerFrameErrors(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  error
	}{
		{"unknown type", []byte{0x7f}, ErrUnknownFrame},
		{"client frame type", []byte{byte(TypeAcquire)}, ErrUnknownFrame},
		{"short token", []byte{byte(TypeAcquired), 0, 0, 1}, io.ErrUnexpectedEOF},
		{"short error header", []byte{byte(TypeError), 0x01}, io.ErrUnexpectedEOF},
		{"short reason", []byte{byte(TypeError), 0x01, 5, 'a'}, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ReadServerFrame(bytes.NewReader(tt.input)); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestAppendErrorCutsLongReasonAtRuneBoundary(t *testing.T) {
	reason := strings.Repeat("é", 200) // 400 bytes
	f, err := ReadServerFrame(bytes.NewReader(AppendError(nil, CodeShuttingDown, reason)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Reason) > 255 || !strings.HasPrefix(reason, f.Reason) || len(f.Reason)%2 != 0 {
		t.Fatalf("reason cut to %d bytes: %q", len(f.Reason), f.Reason)
	}
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		want error
	}{
		{"a", nil},
		{strings.Repeat("a", 255), nil},
		{"", ErrEmptyName},
		{strings.Repeat("a", 256), ErrNameTooLong},
		{"bad\xc3", ErrInvalidName},
	}
	for _, tt := range tests {
		if err := ValidateName(tt.name); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
			t.Errorf("ValidateName(%.20q) = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestLeaseMillis(t *testing.T) {
	tests := []struct {
		lease   time.Duration
		want    uint32
		wantErr bool
	}{
		{time.Second, 1000, false},
		{time.Millisecond, 1, false},
		{time.Microsecond, 0, true},
		{0, 0, true},
		{-time.Second, 0, true},
		{time.Duration(1<<32) * time.Millisecond, 0, true},
	}
	for _, tt := range tests {
		got, err := LeaseMillis(tt.lease)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("LeaseMillis(%v) = %d, %v", tt.lease, got, err)
		}
	}
}

func TestCodes(t *testing.T) {
	for c := 0; c < 256; c++ {
		code := Code(c)
		if code.Temporary() != (c < 0x10) {
			t.Errorf("Code(0x%02x).Temporary() = %v", c, code.Temporary())
		}
		if code.String() == "" {
			t.Errorf("Code(0x%02x) has no text", c)
		}
		if e := CanonicalError(code); e != nil && e.Code != code {
			t.Errorf("CanonicalError(0x%02x).Code = 0x%02x", c, e.Code)
		}
	}
	known := []Code{0x01, 0x02, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}
	for _, c := range known {
		if CanonicalError(c) == nil {
			t.Errorf("no canonical error for 0x%02x", c)
		}
	}
	detailed := &Error{CodeUnknownType, "unknown message type: 0x7f"}
	if !errors.Is(detailed, ErrUnknownType) || errors.Is(detailed, ErrEmptyName) {
		t.Error("errors.Is must match by code")
	}
	if !strings.Contains(detailed.Error(), "0x7f") || !strings.HasPrefix(detailed.Error(), "monolock: ") {
		t.Errorf("Error() = %q", detailed.Error())
	}
}
