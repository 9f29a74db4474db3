package engine

import (
	"context"
	"errors"
	"net"
	"os"
	"time"
)

// ReadyFunc reports whether a started container serves: nil when it
// does. It is called repeatedly, so one attempt should be short. The
// checks run from the bench process, because the images have no shell.
type ReadyFunc func(ctx context.Context, c *Container) error

// readyAttemptTimeout bounds one readiness attempt.
const readyAttemptTimeout = time.Second

// TCPReady succeeds once a TCP connection to Addr is accepted. Through a
// published port it must also stay open for half a second, because
// docker-proxy accepts before the server listens and then resets.
func TCPReady(ctx context.Context, c *Container) error {
	conn, err := dial(ctx, c.Addr())
	if err != nil {
		return err
	}
	defer conn.Close()
	if c.Path == PathDirect {
		return nil
	}
	if err := conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond)); err != nil {
		return err
	}
	if _, err := conn.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return nil
}

// dial connects to addr within readyAttemptTimeout.
func dial(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: readyAttemptTimeout}
	return d.DialContext(ctx, "tcp", addr)
}
