package server_test

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/testpki"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

func TestTLS(t *testing.T) {
	ca := testpki.NewCA(t, "test CA")
	ts := monolocktest.NewServerConfig(t, server.Config{
		IOTimeout: 300 * time.Millisecond,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{ca.Server(t).TLS}},
	})

	// A TLS client is served, promotion is pushed over TLS.
	tlsDial := func() *rawClient {
		c, err := tls.Dial("tcp", ts.Addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatalf("tls dial: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return &rawClient{t: t, conn: c}
	}
	a, b := tlsDial(), tlsDial()
	a.acquire("t", 10*time.Second)
	a.expect(protocol.TypeAcquired)
	b.acquire("t", 10*time.Second)
	b.expect(protocol.TypeWaiting)
	a.conn.Close()
	b.expect(protocol.TypeAcquired)

	// A plaintext client fails the handshake; one that sends nothing is cut
	// off by the io-timeout. Both are counted.
	plain := dial(t, ts.Addr)
	plain.acquire("t", time.Second)
	plain.expectClosed()
	mute := dial(t, ts.Addr)
	mute.expectClosed()
	// The TLS stack may close a timed-out connection before the server
	// counts the failure.
	eventually(t, "two handshake errors counted", func() bool {
		return metric(t, ts.Server(), "monolock_tls_handshake_errors_total") == 2
	})
	b.heartbeat()
	b.expect(protocol.TypeAcquired)
}
