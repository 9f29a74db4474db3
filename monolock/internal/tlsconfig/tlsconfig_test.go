package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/testpki"
)

func TestIdentity(t *testing.T) {
	ca := testpki.NewCA(t, "CA")
	tests := []struct {
		name string
		s    testpki.Subject
		want string
	}{
		{"URI SAN first", testpki.Subject{CommonName: "cn", DNSNames: []string{"a.example", "b.example"}, URIs: []string{"spiffe://example.org/ns/prod/sa/api", "spiffe://example.org/other"}}, "spiffe://example.org/ns/prod/sa/api"},
		{"DNS SAN without URI", testpki.Subject{CommonName: "cn", DNSNames: []string{"a.example", "b.example"}}, "a.example"},
		{"CN only", testpki.Subject{CommonName: "batch-worker"}, "batch-worker"},
		{"nothing", testpki.Subject{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Identity(ca.Client(t, tt.s).Leaf); got != tt.want {
				t.Fatalf("Identity = %q, want %q", got, tt.want)
			}
		})
	}
}

// pki is one generation of server-side files.
type pki struct {
	ca     *testpki.CA
	server *testpki.Cert
}

func newPKI(t *testing.T, name string) pki {
	ca := testpki.NewCA(t, name)
	return pki{ca: ca, server: ca.Server(t)}
}

// write puts p's files at the paths in files.
func (p pki) write(t *testing.T, files Files) {
	t.Helper()
	for path, data := range map[string][]byte{files.CertFile: p.server.CertPEM, files.KeyFile: p.server.KeyPEM, files.ClientCAFile: p.ca.CertPEM} {
		if path == "" {
			continue
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func filesIn(dir string, mTLS bool) Files {
	f := Files{CertFile: filepath.Join(dir, "server.crt"), KeyFile: filepath.Join(dir, "server.key")}
	if mTLS {
		f.ClientCAFile = filepath.Join(dir, "ca.crt")
	}
	return f
}

// result is what the test server learned from one connection.
type result struct {
	identity string
	err      error
}

// serve accepts TLS connections with cfg, completes each handshake, reports
// the peer's identity, then echoes until the peer closes.
func serve(t *testing.T, cfg *tls.Config) (addr string, results <-chan result) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ch := make(chan result, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				tc := tls.Server(c, cfg)
				tc.SetDeadline(time.Now().Add(10 * time.Second))
				if err := tc.Handshake(); err != nil {
					ch <- result{err: err}
					return
				}
				ch <- result{identity: PeerIdentity(tc.ConnectionState())}
				io.Copy(tc, tc)
			}()
		}
	}()
	return l.Addr().String(), ch
}

// dial connects as a client trusting roots and presenting client (if any),
// and proves the connection works with one echoed byte.
func dial(addr string, roots *x509.CertPool, client *testpki.Cert) (*tls.Conn, error) {
	cfg := &tls.Config{RootCAs: roots, ServerName: "localhost"}
	if client != nil {
		cfg.Certificates = []tls.Certificate{client.TLS}
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// With TLS 1.3 a rejected client certificate surfaces on the first read.
	if err := echo(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func echo(c *tls.Conn) error {
	if _, err := c.Write([]byte{'x'}); err != nil {
		return err
	}
	var b [1]byte
	_, err := io.ReadFull(c, b[:])
	return err
}

func next(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the server saw no handshake")
		return result{}
	}
}

func TestMutualTLSIdentityAndRefusals(t *testing.T) {
	dir := t.TempDir()
	p := newPKI(t, "CA")
	files := filesIn(dir, true)
	p.write(t, files)
	r, err := Load(files)
	if err != nil {
		t.Fatal(err)
	}
	if !r.MutualTLS() {
		t.Fatal("MutualTLS() = false with a client CA")
	}
	addr, results := serve(t, r.ServerConfig())

	c, err := dial(addr, p.ca.Pool(), p.ca.Client(t, testpki.Subject{CommonName: "cn", URIs: []string{"spiffe://example.org/a"}}))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := next(t, results); got.err != nil || got.identity != "spiffe://example.org/a" {
		t.Fatalf("server saw %+v", got)
	}

	if c, err := dial(addr, p.ca.Pool(), nil); err == nil {
		c.Close()
		t.Fatal("a client without a certificate was accepted")
	}
	if got := next(t, results); got.err == nil {
		t.Fatalf("server handshake without a client certificate succeeded: %+v", got)
	}

	foreign := testpki.NewCA(t, "foreign")
	if c, err := dial(addr, p.ca.Pool(), foreign.Client(t, testpki.Subject{CommonName: "intruder"})); err == nil {
		c.Close()
		t.Fatal("a client certificate from a foreign CA was accepted")
	}
	if got := next(t, results); got.err == nil {
		t.Fatalf("server handshake with a foreign client certificate succeeded: %+v", got)
	}
}

func TestPlainTLSHasNoIdentity(t *testing.T) {
	dir := t.TempDir()
	p := newPKI(t, "CA")
	files := filesIn(dir, false)
	p.write(t, files)
	r, err := Load(files)
	if err != nil {
		t.Fatal(err)
	}
	if r.MutualTLS() {
		t.Fatal("MutualTLS() = true without a client CA")
	}
	addr, results := serve(t, r.ServerConfig())
	// A certificate offered unasked is not sent, and never trusted.
	c, err := dial(addr, p.ca.Pool(), p.ca.Client(t, testpki.Subject{CommonName: "cn"}))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := next(t, results); got.err != nil || got.identity != "" {
		t.Fatalf("server saw %+v, want an empty identity", got)
	}
}

func TestReload(t *testing.T) {
	dir := t.TempDir()
	files := filesIn(dir, true)
	gen1, gen2 := newPKI(t, "CA 1"), newPKI(t, "CA 2")
	gen1.write(t, files)
	r, err := Load(files)
	if err != nil {
		t.Fatal(err)
	}
	addr, results := serve(t, r.ServerConfig())
	client1 := gen1.ca.Client(t, testpki.Subject{DNSNames: []string{"one.example"}})
	client2 := gen2.ca.Client(t, testpki.Subject{DNSNames: []string{"two.example"}})

	live, err := dial(addr, gen1.ca.Pool(), client1)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if got := next(t, results); got.identity != "one.example" {
		t.Fatalf("server saw %+v", got)
	}

	// Broken reloads keep generation 1 in force.
	if err := os.WriteFile(files.KeyFile, gen2.server.KeyPEM, 0o600); err != nil {
		t.Fatal(err) // key no longer matches the certificate
	}
	if err := r.Reload(); err == nil {
		t.Fatal("Reload accepted a key that does not match the certificate")
	}
	gen1.write(t, files)
	if err := os.WriteFile(files.ClientCAFile, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); !errors.Is(err, ErrNoCACerts) {
		t.Fatalf("Reload with a garbage CA file = %v, want ErrNoCACerts", err)
	}
	if err := os.Remove(files.CertFile); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Reload with a missing certificate = %v, want ErrNotExist", err)
	}
	c, err := dial(addr, gen1.ca.Pool(), client1)
	if err != nil {
		t.Fatalf("generation 1 stopped working after failed reloads: %v", err)
	}
	c.Close()
	next(t, results)

	// A good reload switches new handshakes to generation 2 only.
	gen2.write(t, files)
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	c, err = dial(addr, gen2.ca.Pool(), client2)
	if err != nil {
		t.Fatalf("generation 2 after reload: %v", err)
	}
	c.Close()
	if got := next(t, results); got.identity != "two.example" {
		t.Fatalf("server saw %+v", got)
	}
	if c, err := dial(addr, gen2.ca.Pool(), client1); err == nil {
		c.Close()
		t.Fatal("a client of the replaced CA was accepted after reload")
	}
	next(t, results)
	if c, err := dial(addr, gen1.ca.Pool(), client2); err == nil {
		c.Close()
		t.Fatal("the old server certificate is still served after reload")
	}
	next(t, results)

	// The connection made before the reload is untouched.
	live.SetDeadline(time.Now().Add(10 * time.Second))
	if err := echo(live); err != nil {
		t.Fatalf("established connection broken by reload: %v", err)
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	p := newPKI(t, "CA")
	good := filesIn(dir, true)
	p.write(t, good)
	tests := []struct {
		name  string
		files Files
		want  error
	}{
		{"no certificate", Files{KeyFile: good.KeyFile}, ErrNoCertificate},
		{"no key", Files{CertFile: good.CertFile}, ErrNoCertificate},
		{"missing CA file", Files{CertFile: good.CertFile, KeyFile: good.KeyFile, ClientCAFile: filepath.Join(dir, "missing")}, os.ErrNotExist},
		{"CA file is a key", Files{CertFile: good.CertFile, KeyFile: good.KeyFile, ClientCAFile: good.KeyFile}, ErrNoCACerts},
		{"certificate and key swapped", Files{CertFile: good.KeyFile, KeyFile: good.CertFile}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.files)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("Load = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestReloadKeepsEachFile: "a file that does not load keeps its previous
// value" (docs operations/tls.mdx), per file: a good new certificate
// rotates while the CA file is broken, and a good new CA applies while the
// certificate's key does not match.
func TestReloadKeepsEachFile(t *testing.T) {
	dir := t.TempDir()
	files := filesIn(dir, true)
	gen1, gen2 := newPKI(t, "CA 1"), newPKI(t, "CA 2")
	gen1.write(t, files)
	r, err := Load(files)
	if err != nil {
		t.Fatal(err)
	}
	addr, results := serve(t, r.ServerConfig())
	client1 := gen1.ca.Client(t, testpki.Subject{DNSNames: []string{"one.example"}})
	client2 := gen2.ca.Client(t, testpki.Subject{DNSNames: []string{"two.example"}})
	writeFile := func(path string, data []byte) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	accepted := func(roots *testpki.CA, client *testpki.Cert) bool {
		t.Helper()
		c, err := dial(addr, roots.Pool(), client)
		next(t, results)
		if err == nil {
			c.Close()
		}
		return err == nil
	}

	// New certificate and key, broken CA file: the certificate rotates,
	// the client CA stays generation 1.
	writeFile(files.CertFile, gen2.server.CertPEM)
	writeFile(files.KeyFile, gen2.server.KeyPEM)
	writeFile(files.ClientCAFile, []byte("not PEM"))
	if err := r.Reload(); !errors.Is(err, ErrNoCACerts) {
		t.Fatalf("Reload = %v, want ErrNoCACerts", err)
	}
	if !accepted(gen2.ca, client1) {
		t.Fatal("new server certificate or old client CA not in force after a reload with a broken CA file")
	}
	if accepted(gen1.ca, client1) {
		t.Fatal("the old server certificate is still served")
	}

	// New CA, mismatched key: the CA rotates, the certificate stays.
	writeFile(files.ClientCAFile, gen2.ca.CertPEM)
	writeFile(files.KeyFile, gen1.server.KeyPEM)
	if err := r.Reload(); err == nil {
		t.Fatal("Reload accepted a key that does not match the certificate")
	}
	if !accepted(gen2.ca, client2) {
		t.Fatal("new client CA not in force after a reload with a broken key")
	}
	if accepted(gen2.ca, client1) {
		t.Fatal("a client of the replaced CA was accepted")
	}
}
