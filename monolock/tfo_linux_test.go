package monolock

import (
	"crypto/tls"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/testpki"
	"github.com/monolock/monolock-bench/monolock/internal/tfotest"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/server"
)

// TestClientFastOpen: against a server that accepts TFO, a Client with
// TCPFastOpen sends its ACQUIRE (plain) or its ClientHello (TLS) in the
// SYN once its first connections have fetched a cookie; the kernel
// confirms it (TCPI_OPT_SYN_DATA, TcpExtTCPFastOpenActive). When the
// server stops accepting TFO while the client still has a cookie (a
// restart without -tcp-fastopen), claims still succeed: the kernel sends
// the data again after a normal handshake. Runs in a private network
// namespace when the host's net.ipv4.tcp_fastopen keeps server TFO off.
func TestClientFastOpen(t *testing.T) {
	if !tfotest.Enter(t) {
		return
	}
	ca := testpki.NewCA(t, "tfo")
	for _, tt := range []struct {
		name   string
		tls    *tls.Config
		dialer Dialer
	}{
		{"tcp", nil, nil},
		{"tls", &tls.Config{Certificates: []tls.Certificate{ca.Server(t).TLS}}, &tls.Dialer{Config: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := monolocktest.NewServerConfig(t, server.Config{TCPFastOpen: true, TLSConfig: tt.tls})
			c := New(Config{Address: srv.Addr, Dialer: tt.dialer, TCPFastOpen: true})
			claim := func() (synData bool) {
				t.Helper()
				l, err := c.Acquire(t.Context(), "tfo", 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Release()
				ok, err := tfotest.SynData(l.conn)
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			// The first claim may reach the listener before Serve enabled
			// TFO; the second fetches the cookie.
			claim()
			claim()
			before, _ := tfotest.Counter("TCPFastOpenActive")
			if !claim() {
				t.Error("the third claim's SYN carried no data")
			}
			if after, _ := tfotest.Counter("TCPFastOpenActive"); after <= before {
				t.Errorf("TcpExtTCPFastOpenActive %d → %d", before, after)
			}
		})
	}

	t.Run("server stops accepting", func(t *testing.T) {
		serve := func(addr string, tfo bool) (*server.Server, string, chan error) {
			srv, err := server.New(server.Config{TCPFastOpen: tfo, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- srv.Serve(l) }()
			return srv, l.Addr().String(), done
		}
		srv, addr, done := serve("127.0.0.1:0", true)
		c := New(Config{Address: addr, TCPFastOpen: true})
		for range 3 {
			l, err := c.Acquire(t.Context(), "tfo", 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
		}
		srv.Close()
		<-done
		srv, _, done = serve(addr, false)
		defer func() {
			srv.Close()
			<-done
		}()
		for range 2 {
			l, err := c.Acquire(t.Context(), "tfo", 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := tfotest.SynData(l.conn); ok {
				t.Error("SYN data accepted by a listener without TFO")
			}
			l.Release()
		}
	})
}
