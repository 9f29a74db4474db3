package monolock

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// pipeDialer hands the client one end of a net.Pipe whose other end plays
// a server that sends script after reading the ACQUIRE, then closes.
type pipeDialer struct{ script []byte }

func (d pipeDialer) DialContext(context.Context, string, string) (net.Conn, error) {
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		if _, err := protocol.ReadType(server); err != nil {
			return
		}
		if _, err := protocol.ReadAcquire(server); err != nil {
			return
		}
		go io.Copy(io.Discard, server) // heartbeats; ends when server closes
		server.Write(d.script)
	}()
	return client, nil
}

// FuzzServerStream feeds arbitrary server byte streams to Acquire and the
// Lock: whatever arrives, the client returns, classifies the outcome, and
// reports the token of a leading ACQUIRED.
func FuzzServerStream(f *testing.F) {
	acq := func(tok uint64) []byte { return protocol.AppendAcquired(nil, tok) }
	f.Add(acq(42))
	f.Add(append(protocol.AppendWaiting(nil), acq(7)...))
	f.Add(append(acq(5), protocol.AppendWaiting(nil)...))
	f.Add(append(acq(5), acq(6)...))
	f.Add(protocol.AppendError(nil, protocol.CodeNotAuthorized, "no"))
	f.Add(append(acq(1), protocol.AppendError(nil, 0x02, "kick")...))
	f.Add([]byte{0x7f})
	f.Add([]byte{0x12, 0, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		c := &Client{addr: "pipe", dialer: pipeDialer{script}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := c.Acquire(ctx, "fuzz", 100*time.Millisecond)
		if err != nil {
			if !knownLoss(err) && !connectionError(err) {
				t.Fatalf("Acquire = %v: not a known class", err)
			}
			return
		}
		if len(script) >= protocol.AcquiredLen && script[0] == byte(protocol.TypeAcquired) {
			if want := binary.BigEndian.Uint64(script[1:9]); l.Token() != want {
				t.Fatalf("Token = %d, want %d", l.Token(), want)
			}
		}
		select {
		case <-l.Done(): // the script ends with a close: the lock is lost
		case <-time.After(5 * time.Second):
			t.Fatal("Done not closed after the server went away")
		}
		if err := l.Release(); !knownLoss(err) {
			t.Fatalf("Release = %v: not a known class", err)
		}
	})
}

// connectionError reports whether err is an I/O error of the pipe, which
// Acquire returns unchanged.
func connectionError(err error) bool {
	return err == io.EOF || err == io.ErrUnexpectedEOF || err == io.ErrClosedPipe
}

func knownLoss(err error) bool {
	var se *ServerError
	return errors.As(err, &se) || errors.Is(err, ErrConnectionClosed) ||
		errors.Is(err, ErrProtocolViolation) || errors.Is(err, ErrHeartbeatTimeout)
}
