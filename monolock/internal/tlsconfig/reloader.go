package tlsconfig

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
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
// All methods are safe for concurrent use.
type Reloader struct {
	files   Files
	current atomic.Pointer[tls.Config]
	server  *tls.Config
}

// Load reads the files and returns a Reloader, or an error naming what is
// wrong (missing files, key not matching the certificate, a CA file without
// certificates).
func Load(files Files) (*Reloader, error) {
	if files.CertFile == "" || files.KeyFile == "" {
		return nil, ErrNoCertificate
	}
	r := &Reloader{files: files}
	cfg, err := build(files)
	if err != nil {
		return nil, err
	}
	r.current.Store(cfg)
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

// Reload re-reads the files. On error the configuration in force is kept and
// the error says why; on success the next handshake uses the new files.
func (r *Reloader) Reload() error {
	cfg, err := build(r.files)
	if err != nil {
		return err
	}
	r.current.Store(cfg)
	return nil
}

// build reads the files into a fresh configuration.
func build(files Files) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tlsconfig: load %s and %s: %w", files.CertFile, files.KeyFile, err)
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
	}
	if files.ClientCAFile != "" {
		pemData, err := os.ReadFile(files.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("tlsconfig: client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemData) {
			return nil, fmt.Errorf("%w: %s", ErrNoCACerts, files.ClientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	// Fresh session-ticket keys per generation: a ticket issued under the
	// previous files (perhaps a CA that was just removed) cannot resume a
	// session after the reload.
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("tlsconfig: session ticket key: %w", err)
	}
	cfg.SetSessionTicketKeys([][32]byte{key})
	return cfg, nil
}
