package server_test

// The contract of the public docs page operations/tls.mdx: the three modes
// (plaintext, TLS, mTLS) as the admin API and the identity show them, and
// the identity order (URI SAN, else DNS SAN, else CN). That each file keeps
// its previous value on a failed reload is tested in
// internal/tlsconfig (TestReloadKeepsEachFile) and end to end in
// TestReloadTLSFiles.

import (
	"net/url"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/admin"
	"github.com/monolock/monolock-bench/monolock/internal/testpki"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

func TestDocsTLSModes(t *testing.T) {
	dir := t.TempDir()
	p := newPKIFiles(t, dir, "CA")
	for _, tt := range []struct {
		name      string
		cfg       server.Config
		tls, mtls bool
	}{
		{"no TLS flags", server.Config{}, false, false},
		{"-tls-cert + -tls-key", server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key}, true, false},
		{"... + -tls-client-ca", server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key, TLSClientCAFile: p.clientCA}, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := monolocktest.NewServerConfig(t, tt.cfg)
			var info admin.Info
			adminGet(t, ts.Server().AdminHandler(), "/api/info", &info)
			if info.Config.TLS != tt.tls || info.Config.MTLS != tt.mtls {
				t.Fatalf("config tls=%v mtls=%v, want %v %v", info.Config.TLS, info.Config.MTLS, tt.tls, tt.mtls)
			}
		})
	}
	if _, err := server.New(server.Config{TLSClientCAFile: p.clientCA}); err == nil {
		t.Error("a client CA without a server certificate and key was accepted")
	}
}

// TestDocsTLSIdentityOrder: the identity is the first URI SAN, else the
// first DNS SAN, else the CN, and the admin API shows it for the holder.
func TestDocsTLSIdentityOrder(t *testing.T) {
	dir := t.TempDir()
	p := newPKIFiles(t, dir, "CA")
	ts := monolocktest.NewServerConfig(t, server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key, TLSClientCAFile: p.clientCA})
	for _, tt := range []struct {
		name    string
		subject testpki.Subject
		want    string
	}{
		{"URI SAN first", uriClient, uriClient.URIs[0]},
		{"else the first DNS SAN", dnsClient, dnsClient.DNSNames[0]},
		{"else the CN", cnClient, cnClient.CommonName},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tlsDial(t, ts.Addr, p.ca, p.ca.Client(t, tt.subject))
			c.acquire(tt.name, time.Minute)
			c.expect(protocol.TypeAcquired)
			defer c.conn.Close()
			var l admin.Lock
			adminGet(t, ts.Server().AdminHandler(), "/api/locks/"+url.PathEscape(tt.name), &l)
			if l.Holder == nil || l.Holder.Identity != tt.want {
				t.Fatalf("holder %+v, want identity %q", l.Holder, tt.want)
			}
		})
	}
}
