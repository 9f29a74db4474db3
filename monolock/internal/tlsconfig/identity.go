// Package tlsconfig builds the server's TLS configuration from files, swaps
// it atomically on reload, and names the client behind a verified
// certificate.
package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
)

// Identity returns the identity a certificate asserts: its first URI SAN,
// else its first DNS SAN, else its subject common name. It does not verify
// anything; pass only certificates that were verified.
func Identity(cert *x509.Certificate) string {
	switch {
	case len(cert.URIs) > 0:
		return cert.URIs[0].String()
	case len(cert.DNSNames) > 0:
		return cert.DNSNames[0]
	}
	return cert.Subject.CommonName
}

// PeerIdentity returns the identity of the client of a completed handshake,
// taken from the leaf of its verified chain. It is empty when the client
// presented no verified certificate (plain TLS without -tls-client-ca).
func PeerIdentity(cs tls.ConnectionState) string {
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return ""
	}
	return Identity(cs.VerifiedChains[0][0])
}
