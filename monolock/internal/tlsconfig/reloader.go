package tlsconfig

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// Errors for settings that cannot work; callers report them at startup.
var (
	ErrNoCertificate = errors.New("tlsconfig: a certificate file and a key file are both required")
	ErrNoCACerts     = errors.New("tlsconfig: no PEM certificate found in the client CA file")
)

// Files names the PEM files of a server's TLS setup.
type Files struct {
	CertFile     string // server certificate chain; required
	KeyFile      string // its private key; required
	ClientCAFile string // CAs that sign client certificates; empty = no mTLS
}

// Reloader holds the TLS configuration built from Files and rebuilds it on
// Reload. The *tls.Config returned by ServerConfig stays the same for the
// life of the server; every handshake picks the configuration current at
// that moment, so a reload applies to new connections only and established
// sessions are untouched.
//
// The server certificate (with its key: the two files are one value, a
// pair that must match) and the client CA pool are reloaded independently:
// a file that does not load keeps its previous value, so a good new
// certificate rotates even when the CA file is broken, and the other way
// round.
//
// All methods are safe for concurrent use.
type Reloader struct {
	files   Files
	current atomic.Pointer[tls.Config]
	server  *tls.Config

	mu   sync.Mutex // serializes Reload
	cert tls.Certificate
	cas  *x509.CertPool // nil without mTLS
}

// Load reads the files and returns a Reloader, or an error naming what is
// wrong (missing files, key not matching the certificate, a CA file without
// certificates).
func Load(files Files) (*Reloader, error) {
	if files.CertFile == "" || files.KeyFile == "" {
		return nil, ErrNoCertificate
	}
	r := &Reloader{files: files}
	var err error
	if r.cert, err = loadCert(files); err != nil {
		return nil, err
	}
	if files.ClientCAFile != "" {
		if r.cas, err = loadCAs(files.ClientCAFile); err != nil {
			return nil, err
		}
	}
	if err := r.publish(); err != nil {
		return nil, err
	}
	r.server = &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return r.current.Load(), nil
		},
		// Unused while GetConfigForClient answers, but it makes the
		// outer config complete for code that checks for a certificate.
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return &r.current.Load().Certificates[0], nil
		},
	}
	return r, nil
}

// MutualTLS reports whether client certificates are required and verified.
func (r *Reloader) MutualTLS() bool { return r.files.ClientCAFile != "" }

// ServerConfig returns the configuration to serve with (tls.Server or
// tls.NewListener). Do not modify it.
func (r *Reloader) ServerConfig() *tls.Config { return r.server }

// Reload re-reads the files. The certificate with its key and the client CA
// pool are replaced independently: each that loads is used by the next
// handshake, each that does not keeps its previous value and its error is
// returned (joined with the other's).
func (r *Reloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	if cert, err := loadCert(r.files); err != nil {
		errs = append(errs, err)
	} else {
		r.cert = cert
	}
	if r.files.ClientCAFile != "" {
		if cas, err := loadCAs(r.files.ClientCAFile); err != nil {
			errs = append(errs, err)
		} else {
			r.cas = cas
		}
	}
	if err := r.publish(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// publish makes a fresh configuration of the current certificate and CA
// pool the one new handshakes use. Caller holds r.mu, or owns r alone.
func (r *Reloader) publish() error {
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{r.cert},
	}
	if r.cas != nil {
		cfg.ClientCAs = r.cas
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	// Fresh session-ticket keys per generation: a ticket issued under the
	// previous files (perhaps a CA that was just removed) cannot resume a
	// session after the reload.
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return fmt.Errorf("tlsconfig: session ticket key: %w", err)
	}
	cfg.SetSessionTicketKeys([][32]byte{key})
	r.current.Store(cfg)
	return nil
}

// loadCert reads the certificate and its key.
func loadCert(files Files) (tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
	if err != nil {
		return cert, fmt.Errorf("tlsconfig: load %s and %s: %w", files.CertFile, files.KeyFile, err)
	}
	return cert, nil
}

// loadCAs reads a PEM CA bundle.
func loadCAs(path string) (*x509.CertPool, error) {
	pemData, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tlsconfig: client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		return nil, fmt.Errorf("%w: %s", ErrNoCACerts, path)
	}
	return pool, nil
}
