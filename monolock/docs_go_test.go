package monolock_test

// The contract of the public docs page clients/go.mdx. The Go snippets
// are copied unchanged into the functions below (only the import path
// differs: the docs import github.com/monolock-dev/monolock-go), so a
// change that breaks them fails to compile; the tests run the documented
// error semantics.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"testing"
	"time"

	monolock "github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// The free names of the snippets.
type job struct{}

var (
	jobs         chan job
	serverCAPool *x509.CertPool
	clientCert   tls.Certificate
)

func process(ctx context.Context, j job, token uint64) error { return nil }

// docsGoUse is the "Use" snippet, unchanged.
func docsGoUse(ctx context.Context) error {
	c := monolock.New(monolock.Config{Address: "127.0.0.1:7070"})

	// Blocks until this process owns "nightly-import", runs the function, and
	// releases the lock when it returns. The lease is this client's
	// failure-detection window: how long the lock may sit behind a dead holder
	// before moving on.
	err := c.Do(ctx, "nightly-import", 2*time.Second,
		func(ctx context.Context, token uint64) error {
			// token is the fencing token of this grant. Hand it to the resource
			// the lock guards with every write — a conditional update, a CAS —
			// and have the resource reject anything with a smaller token than
			// the largest it has seen. That fences out a previous holder that
			// woke up after losing the lock.
			//
			// ctx is cancelled the moment ownership stops being confirmed.
			for {
				select {
				case <-ctx.Done():
					return nil // the lock is gone; Do reports why
				case job := <-jobs:
					if err := process(ctx, job, token); err != nil {
						return err
					}
				}
			}
		})
	return err
}

// docsGoTLS is the "TLS" snippet, unchanged.
func docsGoTLS() *monolock.Client {
	c := monolock.New(monolock.Config{
		Address: "locks.internal:7070",
		Dialer: &tls.Dialer{Config: &tls.Config{
			RootCAs:      serverCAPool,
			Certificates: []tls.Certificate{clientCert},
		}},
	})
	return c
}

// TestDocsGoSnippets runs the snippets where they can run here: the "Use"
// snippet against an address where nothing listens returns the dial
// error, and the TLS snippet builds a Client without dialling.
func TestDocsGoSnippets(t *testing.T) {
	if docsGoTLS() == nil {
		t.Fatal("New returned nil")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // do not wait on whatever may listen on 127.0.0.1:7070
	if err := docsGoUse(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Do with a cancelled context = %v, want context.Canceled unchanged", err)
	}
}

// dialErr is a Dialer whose every dial fails with err.
type dialErr struct{ err error }

func (d dialErr) DialContext(context.Context, string, string) (net.Conn, error) { return nil, d.err }

// TestDocsGoErrors: "Do returns exactly the error that occurred": the
// protocol's validation errors, a dial error without a change, a server
// rejection as a *ServerError that unwraps to the canonical error and
// classifies by code range.
func TestDocsGoErrors(t *testing.T) {
	fn := func(context.Context, uint64) error {
		t.Error("fn ran")
		return nil
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	c := monolock.New(monolock.Config{Address: "127.0.0.1:1", Dialer: dialErr{refused}})
	for _, tt := range []struct {
		name  string
		lease time.Duration
		want  error
	}{
		{"", time.Second, protocol.ErrEmptyName},
		{string(make([]byte, 256)), time.Second, protocol.ErrNameTooLong},
		{"a", 0, protocol.ErrInvalidLease},
	} {
		if err := c.Do(t.Context(), tt.name, tt.lease, fn); !errors.Is(err, tt.want) {
			t.Errorf("Do(%q, %v) = %v, want %v", tt.name, tt.lease, err, tt.want)
		}
	}
	if err := c.Do(t.Context(), "a", time.Second, fn); err != refused {
		t.Errorf("Do with a failing dial = %#v, want the dial error itself", err)
	}
	var opErr *net.OpError
	if err := c.Do(t.Context(), "a", time.Second, fn); !errors.As(err, &opErr) {
		t.Errorf("errors.As(*net.OpError) fails on %v", err)
	}

	// A real refused dial, as a user sees it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	err = monolock.New(monolock.Config{Address: addr}).Do(t.Context(), "a", time.Second, fn)
	if !errors.As(err, &opErr) || opErr.Op != "dial" {
		t.Errorf("refused dial = %#v, want the *net.OpError of the dial", err)
	}

	// A server rejection is a *ServerError (peer_test.go runs them over
	// the wire); Temporary follows the code ranges.
	for code, temporary := range map[protocol.Code]bool{0x01: true, 0x02: true, 0x0f: true, 0x10: false, 0x18: false, 0xff: false} {
		if got := (&monolock.ServerError{Code: code}).Temporary(); got != temporary {
			t.Errorf("code 0x%02x: Temporary = %v, want %v", code, got, temporary)
		}
	}
}
