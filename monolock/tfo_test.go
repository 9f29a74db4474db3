package monolock

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/testpki"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// TestFastOpenFallback: a Client with TCPFastOpen works against a server
// that does not accept TFO (here the server's listener has no TFO, and on
// most hosts the kernel keeps server-side TFO off as well): the SYN gets
// no cookie and the connection is a normal one. Plain and TLS.
func TestFastOpenFallback(t *testing.T) {
	ca := testpki.NewCA(t, "tfo")
	for _, tt := range []struct {
		name   string
		cfg    server.Config
		dialer Dialer
	}{
		{"tcp", server.Config{}, nil},
		{"tls", server.Config{TLSConfig: &tls.Config{Certificates: []tls.Certificate{ca.Server(t).TLS}}}, &tls.Dialer{Config: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := monolocktest.NewServerConfig(t, tt.cfg)
			c := New(Config{Address: srv.Addr, Dialer: tt.dialer, TCPFastOpen: true})
			for range 3 {
				l, err := c.Acquire(t.Context(), "tfo/fallback", 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if err := l.Release(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestFastOpenControlNeverFails: where the kernel refuses the socket
// option (here a UDP socket, which has no TCP options), the dial is not
// failed for it.
func TestFastOpenControlNeverFails(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	rc, err := pc.(*net.UDPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if err := fastOpenControl("udp4", pc.LocalAddr().String(), rc); err != nil {
		t.Fatalf("fastOpenControl = %v, want nil", err)
	}
}

// TestFastOpenDialer: the TFO dialer is a copy that still runs the
// caller's control function (and fails the dial when it fails); a
// *tls.Dialer gets a NetDialer; other Dialers are left as they are.
func TestFastOpenDialer(t *testing.T) {
	srv := monolocktest.NewServer(t)
	calls := 0
	var fail error
	own := &net.Dialer{Control: func(string, string, syscall.RawConn) error { calls++; return fail }}
	d, ok := fastOpenDialer(own).(*net.Dialer)
	if !ok || d == own {
		t.Fatalf("fastOpenDialer(*net.Dialer) = %T %p, want a copy", d, d)
	}
	conn, err := d.DialContext(t.Context(), "tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if calls != 1 {
		t.Errorf("the caller's Control ran %d times, want 1", calls)
	}
	fail = errors.New("no")
	if _, err := d.DialContext(t.Context(), "tcp", srv.Addr); !errors.Is(err, fail) {
		t.Errorf("dial with a failing Control: %v", err)
	}
	ctxCalls := 0
	withCtx := &net.Dialer{ControlContext: func(context.Context, string, string, syscall.RawConn) error { ctxCalls++; return nil }}
	conn, err = fastOpenDialer(withCtx).DialContext(t.Context(), "tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if ctxCalls != 1 {
		t.Errorf("the caller's ControlContext ran %d times, want 1", ctxCalls)
	}

	td := &tls.Dialer{}
	got, ok := fastOpenDialer(td).(*tls.Dialer)
	if !ok || got == td || got.NetDialer == nil || got.NetDialer.Control == nil || td.NetDialer != nil {
		t.Errorf("fastOpenDialer(*tls.Dialer) = %+v; caller's now %+v", got, td)
	}
	other := &hidingDialer{}
	if fastOpenDialer(other) != Dialer(other) {
		t.Error("a Dialer of another type was replaced")
	}
}

// TestReplayedClaimReleased shows what a replayed TFO SYN costs a claim.
// A copy of a SYN with an ACQUIRE that arrives after the original
// connection has ended opens a connection the client never sees; the
// server queues or grants its claim, and the client's host resets that
// connection at its SYN-ACK. Here the duplicate is played by a raw
// connection with the same ACQUIRE that is granted and then reset: the
// server releases its claim at once and grants the waiting client, with a
// greater token.
func TestReplayedClaimReleased(t *testing.T) {
	srv := monolocktest.NewServer(t)
	c := New(Config{Address: srv.Addr})
	const name = "tfo/replayed"
	acquire := protocol.AppendAcquire(nil, 5000, name)

	phantom, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := phantom.Write(acquire); err != nil {
		t.Fatal(err)
	}
	f, err := protocol.ReadServerFrame(phantom)
	if err != nil || f.Type != protocol.TypeAcquired {
		t.Fatalf("phantom: %+v, %v", f, err)
	}
	type result struct {
		l   *Lock
		err error
	}
	got := make(chan result, 1)
	go func() {
		// A lease of a minute: the grant cannot wait for a heartbeat (15s).
		l, err := c.Acquire(t.Context(), name, time.Minute)
		got <- result{l, err}
	}()
	waitFor(t, "the client to queue", func() bool {
		info, _ := srv.Server().Lock(name)
		return len(info.Waiters) == 1
	})
	reset := time.Now()
	closeAbortively(phantom) // the client host's RST
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.l.Release()
	if d := time.Since(reset); d > 5*time.Second {
		t.Errorf("granted %v after the reset; want at once (pushed, not at the next heartbeat)", d)
	}
	if r.l.Token() <= f.Token {
		t.Errorf("token %d after the phantom's %d", r.l.Token(), f.Token)
	}
}
