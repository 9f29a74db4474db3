package monolock

import (
	"context"
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
	err    error // why the Config is unusable; returned by every Acquire
}

// New returns a Client for cfg. It does not dial and cannot fail: a Config
// that cannot work (an empty Address) is reported by every Acquire, Do and
// DoRetry of the Client as an error wrapping ErrInvalidConfig, before any
// dial.
func New(cfg Config) *Client {
	c := &Client{addr: cfg.Address, dialer: cfg.Dialer}
	if cfg.Address == "" {
		c.err = fmt.Errorf("%w: Address is empty (want host:port of the server)", ErrInvalidConfig)
	}
	if c.dialer == nil {
		c.dialer = &net.Dialer{}
	}
	return c
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
	conn, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	l := newLock(name, conn)
	frame := protocol.AppendAcquire(make([]byte, 0, 16+len(name)), ms, name)
	sentAt := time.Now()
	if _, err := conn.Write(frame); err != nil {
		closeAbortively(conn)
		return nil, err
	}
	// The answer to ACQUIRE is read here rather than by the reader
	// goroutine: an uncontended grant then costs no goroutine handoff.
	f, answeredAt, err := l.handshake(ctx, lease, sentAt)
	if err != nil {
		closeAbortively(conn)
		return nil, unwrapConnError(err)
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
