// Package tcpfloor is the client side of the tcp-floor baseline (the server
// is cmd/tcpfloor): per claim it connects, sends one 12-byte monolock
// ACQUIRE frame with a 4-byte name, reads the 9-byte ACQUIRED answer, and
// releases by closing the connection — the least any connection-per-claim
// lock can cost. It locks nothing.
package tcpfloor

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// NameLen is the fixed key length of the floor: cmd/tcpfloor reads exactly
// one 12-byte frame, an ACQUIRE with a 4-byte name.
const NameLen = 4

// Floor is a tcp-floor client. It is safe for concurrent use.
type Floor struct {
	addr    string
	leaseMS uint32
	dialer  net.Dialer
}

// New returns a Floor for the server at addr; lease is written into the
// frame like the monolock client does (the server ignores it).
func New(addr string, lease time.Duration) (*Floor, error) {
	ms, err := protocol.LeaseMillis(lease)
	if err != nil {
		return nil, fmt.Errorf("tcpfloor: %w", err)
	}
	return &Floor{addr: addr, leaseMS: ms}, nil
}

// Settings describes the floor for results.json.
func Settings() results.Settings {
	return results.Settings{
		"acquire": "TCP connect, one 12-byte ACQUIRE frame (4-byte name) in, one 9-byte ACQUIRED frame out",
		"release": "close the connection with a reset (SO_LINGER 0), as the monolock client does",
		"locks":   "nothing (a baseline)",
		"key_len": fmt.Sprint(NameLen),
	}
}

// Acquire implements bench.Locker. key must be NameLen bytes long.
func (f *Floor) Acquire(ctx context.Context, key string) (bench.Held, error) {
	if len(key) != NameLen {
		return nil, fmt.Errorf("tcpfloor: key %q is %d bytes; the floor speaks %d-byte names only", key, len(key), NameLen)
	}
	c, err := f.dialer.DialContext(ctx, "tcp", f.addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("tcpfloor: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	var buf [1 + 1 + 4 + 2 + NameLen]byte // the ACQUIRE frame; the 9-byte answer reuses it
	frame := protocol.AppendAcquire(buf[:0], f.leaseMS, key)
	_, err = c.Write(frame)
	if err == nil {
		_, err = io.ReadFull(c, buf[:protocol.AcquiredLen])
	}
	if !stop() || err != nil {
		c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("tcpfloor: %w", err)
	}
	if protocol.Type(buf[0]) != protocol.TypeAcquired {
		c.Close()
		return nil, fmt.Errorf("tcpfloor: answer type 0x%02x, want ACQUIRED", buf[0])
	}
	return held{c}, nil
}

// Close implements bench.Locker; a Floor keeps no resources between claims.
func (f *Floor) Close() error { return nil }

type held struct{ c net.Conn }

// neverLost: the floor holds nothing that could be lost.
var neverLost = make(chan struct{})

func (held) Token() (uint64, bool) { return 0, false }
func (held) Lost() <-chan struct{} { return neverLost }
func (h held) Release(context.Context) error {
	// Same close as the monolock client: a reset leaves no TIME_WAIT
	// socket, so the floor measures the protocol, not port exhaustion.
	if tcp, ok := h.c.(*net.TCPConn); ok {
		tcp.SetLinger(0)
	}
	return h.c.Close()
}
