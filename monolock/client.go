package monolock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// Dialer opens connections to the server. *net.Dialer and *tls.Dialer
// (TLS, and mTLS with a client certificate in its Config) satisfy it, as
// does anything else with this method, such as a SOCKS dialer.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// Config configures a Client.
type Config struct {
	// Address is the server's host:port. Required.
	Address string
	// Dialer opens one connection per claim over "tcp". Default: a
	// connection as &net.Dialer{} makes it (plaintext TCP, no timeout other
	// than the context, TCP keep-alive with Go's defaults: probes after 15s
	// idle). Its keep-alive is switched on only for a lease of 60s or more:
	// a shorter lease's heartbeats (every lease/4 at most) leave no 15s of
	// silence in which a probe could be sent, and switching it on costs 4
	// system calls per claim.
	Dialer Dialer

	// Spares is how many connections the Client keeps dialled in advance
	// (TCP connected, and with a *tls.Dialer the TLS handshake done), so
	// that Acquire writes its ACQUIRE on a ready connection and the claim
	// costs one round trip instead of two (three or more with TLS).
	// Spares taken by claims are replaced in the background, dialled
	// together once half of them are taken; each is replaced when it
	// reaches SpareMaxAge; one found closed (by the server's io-timeout or
	// a restart: its ACQUIRE gets no byte of an answer) is discarded and
	// the claim made again on the next spare or a fresh dial, which the
	// caller does not see: the server never had its ACQUIRE. Every spare is an open connection and a file descriptor
	// on the server and the client, and its refresh a dial every
	// SpareMaxAge; a Client with spares must be closed (Close). Default 0:
	// none, every claim dials its own connection.
	Spares int
	// SpareMaxAge is how long a spare is kept before it is replaced,
	// counted from the start of its dial. The server closes a connection
	// that has not sent its ACQUIRE within its io-timeout, so keep it
	// below the server's -io-timeout with room for a dial. Default
	// DefaultSpareMaxAge (3s, for the server's default of 5s) when zero or
	// negative.
	SpareMaxAge time.Duration
	// TCPFastOpen makes each claim's dial use TCP Fast Open
	// (TCP_FASTOPEN_CONNECT, Linux): once a connection to the server has
	// fetched a cookie, the next connections carry their first write (the
	// ACQUIRE, or the TLS ClientHello) in the SYN, and the server answers
	// one round trip earlier. The server must accept it (-tcp-fastopen and
	// net.ipv4.tcp_fastopen with bit 0x2); where the server, the kernel
	// or a middlebox refuses, the connection falls back to a normal
	// handshake without an error. It applies to a nil Dialer, a
	// *net.Dialer and a *tls.Dialer (their control function is extended,
	// the caller's copy untouched); other Dialers dial as they do. With TFO
	// the dial returns before the handshake, so a refused connection is
	// reported as ErrConnectionClosed by Acquire rather than as a dial
	// error. A SYN with data can be replayed by the network: see
	// server.Config.TCPFastOpen for what a duplicate claim costs. Spares do
	// not use TFO (they are connected in advance). Default false.
	TCPFastOpen bool
}

// Client acquires locks on one server. Each claim is a connection; without
// Config.Spares the Client holds no connection of its own and needs no
// closing. It is safe for concurrent use.
type Client struct {
	addr   string
	dialer Dialer
	err    error   // why the Config is unusable; returned by every Acquire
	spares *spares // nil without Config.Spares
	keeper keeper  // heartbeats of all of the Client's Locks

	// keepAliveLong: the default Dialer, which dials without TCP keep-alive;
	// claims with a lease of keepAliveLease or more switch it on.
	keepAliveLong bool
}

// New returns a Client for cfg. It does not dial (except that with
// Config.Spares it starts dialling the spares in the background) and cannot
// fail: a Config that cannot work (an empty Address) is reported by every
// Acquire, Do and DoRetry of the Client as an error wrapping
// ErrInvalidConfig, before any dial.
func New(cfg Config) *Client {
	c := &Client{addr: cfg.Address, dialer: cfg.Dialer}
	if cfg.Address == "" {
		c.err = fmt.Errorf("%w: Address is empty (want host:port of the server)", ErrInvalidConfig)
	}
	if c.dialer == nil {
		c.dialer, c.keepAliveLong = &net.Dialer{KeepAlive: -1}, true
	}
	if c.err == nil {
		c.configure(cfg)
	}
	return c
}

// configure applies the Config settings that change how claims get their
// connection: TCP Fast Open and warm spares (which start filling now).
func (c *Client) configure(cfg Config) {
	plain := c.dialer
	if cfg.TCPFastOpen {
		c.dialer = fastOpenDialer(plain)
	}
	if cfg.Spares > 0 {
		age := cfg.SpareMaxAge
		if age <= 0 {
			age = DefaultSpareMaxAge
		}
		// Spares dial without TFO: a TFO socket defers its SYN to the
		// first write, so it would not be connected in advance.
		c.spares = newSpares(func(ctx context.Context) (net.Conn, error) {
			return plain.DialContext(ctx, "tcp", c.addr)
		}, cfg.Spares, age)
	}
}

// Close closes the Client's spare connections (Config.Spares) and stops
// their refill; it returns when every goroutine of the Client has exited
// (Locks are not affected: each ends with its own Release). A Client
// without spares holds nothing and needs no closing; Close is then a
// no-op. The Client stays usable after Close: every claim dials its own
// connection. Closing twice is harmless.
func (c *Client) Close() error {
	if c.spares != nil {
		c.spares.close()
	}
	return nil
}

// Acquire claims the lock name with the given lease: it dials, waits in the
// server's queue for as long as it takes, and returns the Lock once it is
// granted. The lease is how long the server tolerates silence from this
// session, not a hold limit; heartbeats keep the lock until Release.
//
// ctx bounds the dial and the wait only; cancelling it once the lock is
// granted has no effect on the Lock. On cancellation Acquire closes the
// connection (leaving the queue) and returns ctx.Err() unchanged.
//
// Errors, all before the lock is granted:
//   - an unusable Config: an error wrapping ErrInvalidConfig;
//   - an empty, too long (> 255 bytes) or invalid UTF-8 name, or a lease
//     that is not at least 1ms (or beyond lease_ms's u32 range), before
//     dialling: the protocol's validation error (protocol.ErrEmptyName,
//     protocol.ErrNameTooLong, protocol.ErrInvalidName,
//     protocol.ErrInvalidLease; match with errors.Is);
//   - a failed dial: the Dialer's error, unchanged;
//   - a failed connection (a write or read error, or the server closing it
//     without an ERROR frame, which is io.EOF): the connection's error,
//     unchanged;
//   - an ERROR frame: a *ServerError;
//   - no answer for 0.8 × lease: ErrHeartbeatTimeout; a frame protocol
//     version 1 does not allow: an error wrapping ErrProtocolViolation;
//   - ctx ending: ctx.Err(), unchanged.
func (c *Client) Acquire(ctx context.Context, name string, lease time.Duration) (*Lock, error) {
	if err := c.validate(name, lease); err != nil {
		return nil, err
	}
	ms, _ := protocol.LeaseMillis(lease)
	if l, err, ok := c.acquireOnSpare(ctx, name, ms, lease); ok {
		return l, err
	}
	conn, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return c.claim(ctx, conn, name, ms, lease, false)
}

// claim sends the ACQUIRE on conn and returns the granted Lock, closing
// conn on failure. On a spare, a write that fails or an answer that ends
// before its first byte is errSpareDead.
func (c *Client) claim(ctx context.Context, conn net.Conn, name string, ms uint32, lease time.Duration, spare bool) (*Lock, error) {
	l := newLock(name, conn, &c.keeper)
	var counted *countingReader
	if spare {
		counted = &countingReader{r: conn}
		l.r.Reset(counted) // keeps newLock's 64-byte buffer
	}
	frame := protocol.AppendAcquire(make([]byte, 0, 16+len(name)), ms, name)
	sentAt := time.Now()
	if _, err := conn.Write(frame); err != nil {
		closeAbortively(conn)
		if spare {
			c.spares.taken()
			return nil, errSpareDead
		}
		return nil, err
	}
	// The answer to ACQUIRE is read here rather than by the reader
	// goroutine: an uncontended grant then costs no goroutine handoff.
	f, answeredAt, err := l.handshake(ctx, lease, sentAt)
	if spare {
		c.spares.taken()
	}
	if err != nil {
		closeAbortively(conn)
		if spare && counted.n == 0 && errors.Is(err, ErrConnectionClosed) {
			return nil, errSpareDead
		}
		return nil, unwrapConnError(err)
	}
	if c.keepAliveLong && lease >= keepAliveLease { // after the answer: off the claim's critical path
		keepAlive(conn)
	}
	switch f.Type {
	case protocol.TypeAcquired:
		l.token = f.Token
		close(l.granted)
		l.start(lease, sentAt, answeredAt, false)
		return l, nil
	case protocol.TypeError:
		closeAbortively(conn)
		return nil, &ServerError{Code: f.Code, Reason: f.Reason}
	}
	// WAITING: the reader goroutine takes over and receives the promotion.
	l.start(lease, sentAt, answeredAt, true)
	select {
	case <-l.granted:
		return l, nil
	case <-l.ctx.Done():
		l.wait()
		return nil, unwrapConnError(l.Err())
	case <-ctx.Done():
		l.Release()
		return nil, ctx.Err()
	}
}

// validate reports what makes an Acquire of name with lease impossible
// before dialling: the Config, then the name, then the lease.
func (c *Client) validate(name string, lease time.Duration) error {
	if c.err != nil {
		return c.err
	}
	if err := protocol.ValidateName(name); err != nil {
		return err
	}
	_, err := protocol.LeaseMillis(lease)
	return err
}

// keepAliveLease is the shortest lease whose heartbeats (every lease/4 at
// most) can leave a connection silent for Go's default keep-alive idle
// time, 15s: from this lease on the default Dialer's claims send probes
// as &net.Dialer{} would.
const keepAliveLease = 4 * 15 * time.Second

// keepAlive switches TCP keep-alive on conn on with Go's defaults (idle
// and interval 15s, 9 probes), as &net.Dialer{} does at the dial.
func keepAlive(conn net.Conn) {
	if tcp, ok := conn.(*net.TCPConn); ok {
		tcp.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true})
	}
}
