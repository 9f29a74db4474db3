package server_test

import (
	"crypto/tls"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/testpki"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// TestTLS runs in a bubble: the certificates are made in it, valid on its
// fake clock.
func TestTLS(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ca := testpki.NewCA(t, "test CA")
		ts := monolocktest.NewPipeServer(t, server.Config{
			IOTimeout: 300 * time.Millisecond,
			TLSConfig: &tls.Config{Certificates: []tls.Certificate{ca.Server(t).TLS}},
		})

		// A TLS client is served, promotion is pushed over TLS.
		tlsDial := func() *rawClient {
			raw := connect(t, ts)
			c := tls.Client(raw.conn, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
			if err := c.Handshake(); err != nil {
				t.Fatalf("tls handshake: %v", err)
			}
			return &rawClient{t: t, conn: c}
		}
		a, b := tlsDial(), tlsDial()
		a.acquire("t", 10*time.Second)
		a.expect(protocol.TypeAcquired)
		b.acquire("t", 10*time.Second)
		b.expect(protocol.TypeWaiting)
		a.conn.Close()
		b.expect(protocol.TypeAcquired)

		// A plaintext client fails the handshake at once; one that sends
		// nothing is cut off exactly one io-timeout after it connected.
		// Both are counted.
		plain := connect(t, ts)
		plain.acquire("t", time.Second)
		start := time.Now()
		plain.expectClosed()
		elapsed(t, "plaintext client closed", start, 0)
		mute := connect(t, ts)
		mute.expectClosed()
		elapsed(t, "mute client closed", start, 300*time.Millisecond)
		settled(t, "two handshake errors counted", func() bool {
			return metric(t, ts.Server(), "monolock_tls_handshake_errors_total") == 2
		})
		b.heartbeat()
		b.expect(protocol.TypeAcquired)
	})
}
