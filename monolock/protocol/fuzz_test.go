package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReadAcquire feeds arbitrary bytes to the server-side decoder: it must
// never panic, every outcome is a valid frame, a protocol *Error or a short
// read, and a valid frame re-encodes to the bytes it came from.
func FuzzReadAcquire(f *testing.F) {
	f.Add(AppendAcquire(nil, 1000, "lock")[1:])
	f.Add([]byte{2, 0, 0, 0, 1, 0, 1, 'a'})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 1, 'a'})
	f.Add([]byte{1, 0, 0, 0, 1, 0xff, 0xff})
	f.Add([]byte{1, 0, 0, 0, 1, 0, 2, 0xc3, 0x28})
	f.Fuzz(func(t *testing.T, body []byte) {
		// Plain readers, and bufio.Readers (read in place, one with a
		// buffer shorter than most names, which falls back).
		for _, r := range []io.Reader{
			bytes.NewReader(body), iotest.OneByteReader(bytes.NewReader(body)),
			bufio.NewReaderSize(bytes.NewReader(body), 16), bufio.NewReader(iotest.OneByteReader(bytes.NewReader(body))),
		} {
			a, err := ReadAcquire(r)
			var perr *Error
			switch {
			case err == nil:
				if ValidateName(a.Name) != nil || a.LeaseMS == 0 || a.Version != Version {
					t.Fatalf("accepted invalid frame %+v", a)
				}
				again := AppendAcquire(nil, a.LeaseMS, a.Name)[1:]
				if !bytes.Equal(again, body[:len(again)]) {
					t.Fatalf("re-encoding %+v gave %x, input %x", a, again, body)
				}
			case errors.As(err, &perr):
				if perr.Code.Temporary() {
					t.Fatalf("decoder returned a server condition: %v", err)
				}
			case errors.Is(err, io.ErrUnexpectedEOF):
			default:
				t.Fatalf("unexpected error %v", err)
			}
		}
	})
}

// FuzzReadServerFrame checks the client-side decoder the same way.
func FuzzReadServerFrame(f *testing.F) {
	f.Add(AppendWaiting(nil))
	f.Add(AppendAcquired(nil, 42))
	f.Add(AppendError(nil, CodeShuttingDown, "bye"))
	f.Add([]byte{0x13, 0x01, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		// The same input through a bufio.Reader (fields read in place)
		// decodes to the same frames and the same final error.
		br := bufio.NewReaderSize(iotest.OneByteReader(bytes.NewReader(in)), 16)
		for {
			fr, err := ReadServerFrame(r)
			bfr, berr := ReadServerFrame(br)
			if bfr != fr || (berr == nil) != (err == nil) || berr != nil && berr.Error() != err.Error() {
				t.Fatalf("through bufio: %+v, %v; plain: %+v, %v", bfr, berr, fr, err)
			}
			if err != nil {
				if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrUnknownFrame) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var again []byte
			switch fr.Type {
			case TypeWaiting:
				again = AppendWaiting(nil)
			case TypeAcquired:
				again = AppendAcquired(nil, fr.Token)
			case TypeError:
				again = AppendError(nil, fr.Code, fr.Reason)
			default:
				t.Fatalf("decoded unknown type %+v", fr)
			}
			consumed := in[:len(in)-r.Len()]
			if !bytes.HasSuffix(consumed, again) {
				t.Fatalf("frame %+v re-encodes to %x, not a suffix of %x", fr, again, consumed)
			}
		}
	})
}
