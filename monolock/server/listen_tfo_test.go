//go:build linux

package server_test

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/tfotest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// tcpFastOpenConnect is Linux's TCP_FASTOPEN_CONNECT: connect defers the
// SYN to the first write, which it carries when a cookie is cached.
const tcpFastOpenConnect = 30

// acceptLog is a TCP listener that hands every accepted connection to
// accepted as well as to Serve.
type acceptLog struct {
	*net.TCPListener
	accepted chan net.Conn
}

func (l acceptLog) Accept() (net.Conn, error) {
	c, err := l.TCPListener.Accept()
	if err == nil {
		l.accepted <- c
	}
	return c, err
}

// TestServeAcceptsTCPFastOpen: with Config.TCPFastOpen a connection whose
// SYN carries the ACQUIRE (a client holding a cookie from an earlier
// connection) is accepted and answered, and the kernel confirms that the
// data rode in the SYN: TCPI_OPT_SYN_DATA on both ends and the namespace's
// TcpExtTCPFastOpenPassive counter. Runs in a private network namespace
// when the host's net.ipv4.tcp_fastopen keeps server-side TFO off.
func TestServeAcceptsTCPFastOpen(t *testing.T) {
	if !tfotest.Enter(t) {
		return
	}
	logs := &lockedWriter{}
	srv, err := server.New(server.Config{TCPFastOpen: true, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := acceptLog{ln.(*net.TCPListener), make(chan net.Conn, 4)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})

	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpFastOpenConnect, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	claim := func(name string) (client, server net.Conn) {
		t.Helper()
		c, err := d.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write(protocol.AppendAcquire(nil, 5000, name)); err != nil {
			t.Fatal(err)
		}
		var buf [protocol.AcquiredLen]byte
		if _, err := io.ReadFull(c, buf[:]); err != nil {
			t.Fatal(err)
		}
		if protocol.Type(buf[0]) != protocol.TypeAcquired {
			t.Fatalf("answer %x, want ACQUIRED", buf)
		}
		return c, <-l.accepted
	}

	// Serve enables TFO before its first Accept, but the kernel may have
	// completed the first handshake before that: once a claim is answered
	// the listener has TFO, and the next connection fetches the cookie
	// (its SYN asks for one).
	claim("tfo/serving")
	claim("tfo/cookie")
	before, err := tfotest.Counter("TCPFastOpenPassive")
	if err != nil {
		t.Fatal(err)
	}
	c, s := claim("tfo/second")
	after, err := tfotest.Counter("TCPFastOpenPassive")
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("TcpExtTCPFastOpenPassive %d → %d: the second connection was not accepted with TFO", before, after)
	}
	for side, conn := range map[string]net.Conn{"client": c, "server": s} {
		if ok, err := tfotest.SynData(conn); err != nil || !ok {
			t.Errorf("%s: SYN data accepted = %v (%v), want true", side, ok, err)
		}
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings logged:\n%s", logs.String())
	}
}

// TestServeFastOpenUnavailable: when the listener has no socket to set
// TCP_FASTOPEN on, Serve warns and serves without it.
func TestServeFastOpenUnavailable(t *testing.T) {
	logs := &lockedWriter{}
	srv, err := server.New(server.Config{TCPFastOpen: true, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(plainListener{ln}) }()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})
	c := dial(t, ln.Addr().String())
	c.acquire("tfo/none", 5*time.Second)
	c.expect(protocol.TypeAcquired)
	if !strings.Contains(logs.String(), "TCP Fast Open not enabled") {
		t.Errorf("no warning logged:\n%s", logs.String())
	}
}

// plainListener hides the listener's socket (no SyscallConn).
type plainListener struct{ l net.Listener }

func (p plainListener) Accept() (net.Conn, error) { return p.l.Accept() }
func (p plainListener) Close() error              { return p.l.Close() }
func (p plainListener) Addr() net.Addr            { return p.l.Addr() }

// lockedWriter collects log output written by server goroutines.
type lockedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
