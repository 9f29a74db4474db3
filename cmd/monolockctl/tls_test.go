package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/server"
)

// selfSigned writes a self-signed certificate (its own CA) and its key as
// PEM files into dir. (monolock/internal/testpki is out of this command's
// reach: internal to monolock/.)
func selfSigned(t *testing.T, dir, base string, usage x509.ExtKeyUsage) (certFile, keyFile string, pair tls.Certificate, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: base},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	certFile, keyFile = filepath.Join(dir, base+".crt"), filepath.Join(dir, base+".key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if pair, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return certFile, keyFile, pair, pool
}

// run over mTLS: -tls-ca verifies the server, -tls-cert/-tls-key present
// the client certificate the server requires.
func TestRunOverMutualTLS(t *testing.T) {
	dir := t.TempDir()
	srvCert, _, srvPair, _ := selfSigned(t, dir, "server", x509.ExtKeyUsageServerAuth)
	cliCert, cliKey, _, cliPool := selfSigned(t, dir, "client", x509.ExtKeyUsageClientAuth)
	srv := monolocktest.NewServerConfig(t, server.Config{TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{srvPair},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    cliPool,
	}})
	tests := []struct {
		name string
		tls  []string
		code int
		want string
	}{
		{"mTLS", []string{"-tls-ca", srvCert, "-tls-cert", cliCert, "-tls-key", cliKey}, 0, ""},
		{"no client certificate", []string{"-tls-ca", srvCert}, exitNotObtained, "not obtained"},
		{"server not trusted", []string{"-tls-ca", cliCert, "-tls-cert", cliCert, "-tls-key", cliKey}, exitNotObtained, "certificate"},
		{"plaintext against TLS", nil, exitNotObtained, "not obtained"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"run", "-addr", srv.Addr, "-wait", "5s"}, tt.tls...), "tls-job", "sh", "-c", `test -n "$MONOLOCK_TOKEN"`)
			code, _, stderr := invoke(t, nil, args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}
