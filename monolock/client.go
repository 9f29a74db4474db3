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
	// Dialer opens one connection per claim over "tcp". Default:
	// &net.Dialer{} (plaintext TCP, no timeout other than the context).
	Dialer Dialer
}

// Client acquires locks on one server. It holds no connection of its own
// (each claim is a connection), so it needs no closing, and it is safe for
// concurrent use.
type Client struct {
	addr   string
	dialer Dialer
}

// New returns a Client for cfg. It does not dial.
func New(cfg Config) (*Client, error) {
	if cfg.Address == "" {
		return nil, errors.New("monolock: Config.Address is empty")
	}
	d := cfg.Dialer
	if d == nil {
		d = &net.Dialer{}
	}
	return &Client{addr: cfg.Address, dialer: d}, nil
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
// An empty, too long (> 255 bytes) or invalid UTF-8 name and a lease that
// is not at least 1ms are rejected before dialling with the protocol's
// error (protocol.ErrEmptyName, protocol.ErrNameTooLong,
// protocol.ErrInvalidName, protocol.ErrInvalidLease).
func (c *Client) Acquire(ctx context.Context, name string, lease time.Duration) (*Lock, error) {
	if err := protocol.ValidateName(name); err != nil {
		return nil, err
	}
	ms, err := protocol.LeaseMillis(lease)
	if err != nil {
		return nil, err
	}
	conn, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("monolock: dial %s: %w", c.addr, err)
	}
	l := newLock(name, conn)
	frame := protocol.AppendAcquire(make([]byte, 0, 16+len(name)), ms, name)
	sentAt := time.Now()
	if _, err := conn.Write(frame); err != nil {
		closeAbortively(conn)
		return nil, fmt.Errorf("%w: sending ACQUIRE: %w", ErrConnectionClosed, err)
	}
	// The answer to ACQUIRE is read here rather than by the reader
	// goroutine: an uncontended grant then costs no goroutine handoff.
	f, answeredAt, err := l.handshake(ctx, lease, sentAt)
	if err != nil {
		closeAbortively(conn)
		return nil, err
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
		return nil, l.Err()
	case <-ctx.Done():
		l.Release()
		return nil, ctx.Err()
	}
}
