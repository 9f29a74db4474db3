package testpki

import (
	"crypto/x509"
	"testing"
)

func TestChainsVerify(t *testing.T) {
	ca := NewCA(t, "test CA")
	other := NewCA(t, "other CA")
	srv := ca.Server(t)
	if _, err := srv.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "localhost"}); err != nil {
		t.Fatalf("server cert for localhost: %v", err)
	}
	if err := srv.Leaf.VerifyHostname("127.0.0.1"); err != nil {
		t.Fatalf("server cert for 127.0.0.1: %v", err)
	}
	if _, err := srv.Leaf.Verify(x509.VerifyOptions{Roots: other.Pool()}); err == nil {
		t.Fatal("server cert verified against a foreign CA")
	}
	cl := ca.Client(t, Subject{CommonName: "cn", DNSNames: []string{"a.example"}, URIs: []string{"spiffe://example.org/a"}})
	opts := x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := cl.Leaf.Verify(opts); err != nil {
		t.Fatalf("client cert: %v", err)
	}
	if cl.Leaf.Subject.CommonName != "cn" || cl.Leaf.DNSNames[0] != "a.example" || cl.Leaf.URIs[0].String() != "spiffe://example.org/a" {
		t.Fatalf("client subject not carried: %+v", cl.Leaf)
	}
	if len(cl.TLS.Certificate) != 1 || cl.TLS.PrivateKey == nil {
		t.Fatal("tls.Certificate not filled")
	}
}
