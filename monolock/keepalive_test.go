package monolock

import (
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

// keepAliveOn reads SO_KEEPALIVE of a Lock's TCP connection.
func keepAliveOn(t *testing.T, l *Lock) bool {
	t.Helper()
	rc, err := l.conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var serr error
	if err := rc.Control(func(fd uintptr) { v, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	return v != 0
}

// TestDefaultDialerKeepAlive: the default Dialer behaves as the documented
// &net.Dialer{} wherever TCP keep-alive could send a probe (leases from
// 60s on, whose heartbeats can leave 15s of silence), on fresh dials and on
// spares; shorter leases skip its system calls; a caller's Dialer is left
// as it is.
func TestDefaultDialerKeepAlive(t *testing.T) {
	srv := monolocktest.NewServer(t)
	for _, tt := range []struct {
		name   string
		cfg    Config
		lease  time.Duration
		wantOn bool
	}{
		{"default/short", Config{}, keepAliveLease - time.Millisecond, false},
		{"default/long", Config{}, keepAliveLease, true},
		{"spares/short", Config{Spares: 1}, 2 * time.Second, false},
		{"spares/long", Config{Spares: 1}, 10 * time.Minute, true},
		{"caller-off/long", Config{Dialer: &net.Dialer{KeepAlive: -1}}, 10 * time.Minute, false},
		{"caller-on/short", Config{Dialer: &net.Dialer{}}, 2 * time.Second, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Address = srv.Addr
			c := New(tt.cfg)
			defer c.Close()
			if tt.cfg.Spares > 0 {
				waitForSpare(t, c)
			}
			l, err := c.Acquire(t.Context(), "ka/"+tt.name, tt.lease)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			if tt.cfg.Spares > 0 && c.spares.missed.Load() != 0 {
				t.Fatal("the claim found no spare")
			}
			if got := keepAliveOn(t, l); got != tt.wantOn {
				t.Errorf("SO_KEEPALIVE on = %v, want %v", got, tt.wantOn)
			}
		})
	}
}

// waitForSpare returns once c has a spare ready.
func waitForSpare(t *testing.T, c *Client) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.spares.mu.Lock()
		n := len(c.spares.idle)
		c.spares.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no spare dialled within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
