package containers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
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

// RedisReady succeeds once Redis at Addr answers PING with PONG (and not
// with -LOADING or another error).
func RedisReady(ctx context.Context, c *Container) error {
	conn, err := dial(ctx, c.Addr())
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(readyAttemptTimeout)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("bench: redis answered PING with %q", strings.TrimSpace(line))
	}
	return nil
}

// HTTPReady returns a check that succeeds once GET path on port (one of
// Spec.Ports, or Spec.Port) answers 200, like monolock's /healthz.
func HTTPReady(port int, path string) ReadyFunc {
	return func(ctx context.Context, c *Container) error {
		ctx, cancel := context.WithTimeout(ctx, readyAttemptTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.AddrOf(port)+path, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("bench: GET %s: %s", path, resp.Status)
		}
		return nil
	}
}

// dial connects to addr within readyAttemptTimeout.
func dial(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: readyAttemptTimeout}
	return d.DialContext(ctx, "tcp", addr)
}
