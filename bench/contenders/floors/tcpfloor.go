// Package floors holds the two baselines that frame the physics in the
// latency and throughput scenarios. They lock nothing.
//
// tcp-floor (TCP, server cmd/tcpfloor): per claim it connects, sends one
// 12-byte monolock ACQUIRE frame with a 4-byte name, reads the 9-byte
// ACQUIRED answer, and releases by closing the connection — the least any
// connection-per-claim lock can cost.
//
// redis-floor (Redis, on the redis contender's server): two PINGs on
// go-redis's persistent connections, the least any two-round-trip Redis
// lock can cost.
package floors

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

// TCP returns the tcp-floor row of the contender table.
func TCP() bench.Contender {
	return bench.Contender{
		Name: "tcp-floor", Label: "tcp-floor", Family: "floor", Colour: "#555555",
		Server: TCPServer, Floor: true, Settings: TCPSettings(),
		Claims: results.OfKind(results.ClaimTarget, []results.ClaimRule{belowLock("tcp-floor", "monolock", "whose claim is the same connection and frame exchange plus the lock table")}),
		New: func(_ context.Context, addrs []string, lease time.Duration, _ bench.OpenOptions) (bench.Locker, error) {
			return NewTCP(addrs[0], lease)
		},
	}
}

// TCPServer is the do-nothing server of the tcp-floor, run exactly like
// the monolock server (its own container or child process).
var TCPServer = &bench.ServerSpec{
	Name:      "tcp-floor",
	Flag:      "tcpfloor",
	GoPackage: "github.com/monolock/monolock-bench/cmd/tcpfloor",
	Args:      func(a bench.ServerArgs) []string { return []string{"-listen", a.Listen} },
	Port:      7071,
}

// NameLen is the fixed key length of the floor: cmd/tcpfloor reads exactly
// one 12-byte frame, an ACQUIRE with a 4-byte name.
const NameLen = 4

// TCPFloor is a tcp-floor client. It is safe for concurrent use.
type TCPFloor struct {
	addr    string
	leaseMS uint32
	dialer  net.Dialer
}

// NewTCP returns a TCPFloor for the server at addr; lease is written into
// the frame like the monolock client does (the server ignores it).
func NewTCP(addr string, lease time.Duration) (*TCPFloor, error) {
	ms, err := protocol.LeaseMillis(lease)
	if err != nil {
		return nil, fmt.Errorf("floors: %w", err)
	}
	// The monolock client's default dialer: no TCP keep-alive (the floor is
	// the same exchange, so it pays the same system calls per claim).
	return &TCPFloor{addr: addr, leaseMS: ms, dialer: net.Dialer{KeepAlive: -1}}, nil
}

// TCPSettings describes the tcp-floor for results.json.
func TCPSettings() results.Settings {
	return results.Settings{
		"acquire": "TCP connect, one 12-byte ACQUIRE frame (4-byte name) in, one 9-byte ACQUIRED frame out",
		"release": "close the connection with a reset (SO_LINGER 0), as the monolock client does",
		"sockets": "no TCP keep-alive on either side, as the monolock client and server",
		"locks":   "nothing (a baseline)",
		"key_len": fmt.Sprint(NameLen),
	}
}

// Acquire implements bench.Locker. key must be NameLen bytes long.
func (f *TCPFloor) Acquire(ctx context.Context, key string) (bench.Held, error) {
	if len(key) != NameLen {
		return nil, fmt.Errorf("floors: tcp-floor: key %q is %d bytes; the floor speaks %d-byte names only", key, len(key), NameLen)
	}
	c, err := f.dialer.DialContext(ctx, "tcp", f.addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("floors: tcp-floor: %w", err)
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
		return nil, fmt.Errorf("floors: tcp-floor: %w", err)
	}
	if protocol.Type(buf[0]) != protocol.TypeAcquired {
		c.Close()
		return nil, fmt.Errorf("floors: tcp-floor: answer type 0x%02x, want ACQUIRED", buf[0])
	}
	return tcpHeld{c}, nil
}

// Close implements bench.Locker; a Floor keeps no resources between acquires.
func (f *TCPFloor) Close() error { return nil }

type tcpHeld struct{ c net.Conn }

// neverLost is the Lost channel of a floor grant: a floor holds nothing
// that could be lost.
var neverLost = make(chan struct{})

func (tcpHeld) Token() (uint64, bool) { return 0, false }
func (tcpHeld) Lost() <-chan struct{} { return neverLost }
func (h tcpHeld) Release(context.Context) error {
	// Same close as the monolock client: a reset leaves no TIME_WAIT
	// socket, so the floor measures the protocol, not port exhaustion.
	if tcp, ok := h.c.(*net.TCPConn); ok {
		tcp.SetLinger(0)
	}
	return h.c.Close()
}
