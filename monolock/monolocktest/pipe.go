package monolocktest

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
)

// Listener is an in-memory net.Listener: each DialContext makes a
// net.Pipe, hands one end to Accept and returns the other. Every
// connection has addresses of its own (the listener is "pipe:0", dialled
// connections are "pipe:1", "pipe:2", ...), so a server tells its peers
// apart by remote address as it does over TCP.
//
// Inside a testing/synctest bubble every wait on a Listener and its
// connections (Accept, a dial, a read, a write, a deadline) is durably
// blocking, so a server's leases, heartbeats and io-timeouts run on the
// bubble's fake clock; a Listener made in a bubble is used only there.
// Unlike TCP, a pipe has no buffer (a write waits until the peer reads it)
// and no half-close.
//
// A Listener is safe for concurrent use.
type Listener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	peers  *atomic.Uint64 // numbers the dialled ends; shared across restarts
}

// NewListener returns an open in-memory listener.
func NewListener() *Listener { return newListener(new(atomic.Uint64)) }

func newListener(peers *atomic.Uint64) *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{}), peers: peers}
}

// Accept waits for the next dial; after Close it returns net.ErrClosed.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and refuses later dials; connections already made
// stay open. Closing twice is harmless.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is "pipe:0".
func (l *Listener) Addr() net.Addr { return pipeAddr(0) }

// DialContext connects to the listener, whatever network and address
// say, so that a Listener is a monolock.Config.Dialer. It waits until
// Accept takes the connection, ctx ends (ctx.Err()) or the listener is
// closed (an error that matches syscall.ECONNREFUSED, as TCP's would).
func (l *Listener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	addr := pipeAddr(l.peers.Add(1))
	select {
	case l.conns <- pipeConn{Conn: server, local: pipeAddr(0), remote: addr}:
		return pipeConn{Conn: client, local: addr, remote: pipeAddr(0)}, nil
	case <-l.closed:
		client.Close()
		server.Close()
		return nil, &net.OpError{Op: "dial", Net: "pipe", Addr: pipeAddr(0), Err: syscall.ECONNREFUSED}
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
}

// pipeConn is one end of a net.Pipe with its own addresses.
type pipeConn struct {
	net.Conn
	local, remote net.Addr
}

func (c pipeConn) LocalAddr() net.Addr  { return c.local }
func (c pipeConn) RemoteAddr() net.Addr { return c.remote }

// pipeAddr numbers the ends of in-memory connections: 0 is the listener.
type pipeAddr uint64

func (pipeAddr) Network() string  { return "pipe" }
func (a pipeAddr) String() string { return fmt.Sprintf("pipe:%d", uint64(a)) }
