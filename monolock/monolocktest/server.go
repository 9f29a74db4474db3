// Package monolocktest runs a real monolock server in-process for tests,
// like net/http/httptest: it listens on a loopback port, or serves
// in-memory connections for tests in a testing/synctest bubble, and is
// closed by the test's cleanup.
package monolocktest

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/server"
)

// Server is an in-process monolock server on 127.0.0.1, or on in-memory
// connections (NewPipeServer). Its methods are safe for concurrent use.
type Server struct {
	// Addr is the host:port the server listens on, or "pipe:0" for a
	// server from NewPipeServer. It stays the same across Restart.
	Addr string

	cfg    server.Config
	peers  *atomic.Uint64 // numbers in-memory connections; nil over TCP
	mu     sync.Mutex
	srv    *server.Server
	pipe   *Listener     // the current in-memory listener; nil over TCP
	served chan struct{} // closed when the current Serve returns
	closed bool
}

// NewServer starts a server with the default configuration (io-timeout 5s)
// and logs discarded. It is closed by tb.Cleanup.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	return NewServerConfig(tb, server.Config{})
}

// NewServerConfig starts a server with cfg on 127.0.0.1:0. A nil cfg.Logger
// discards logs (rather than slog.Default). It is closed by tb.Cleanup.
func NewServerConfig(tb testing.TB, cfg server.Config) *Server {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l, err := listen("127.0.0.1:0")
	if err != nil {
		tb.Fatalf("monolocktest: listen: %v", err)
	}
	s := &Server{Addr: l.Addr().String(), cfg: cfg}
	s.start(tb, l)
	tb.Cleanup(s.Close)
	return s
}

// NewPipeServer starts a server with cfg (a nil cfg.Logger discards logs)
// that serves in-memory connections (see Listener) instead of a port:
// dial it with DialContext, or give the Server to a client as its
// monolock.Config.Dialer. Made inside a testing/synctest bubble, the
// server's leases, heartbeats and io-timeouts run on the bubble's fake
// clock, so a test can assert their durations exactly; it must then be
// used only in that bubble. It is closed by tb.Cleanup.
func NewPipeServer(tb testing.TB, cfg server.Config) *Server {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{Addr: pipeAddr(0).String(), cfg: cfg, peers: new(atomic.Uint64)}
	s.start(tb, s.newPipe())
	tb.Cleanup(s.Close)
	return s
}

// newPipe makes the in-memory listener of the next Serve.
func (s *Server) newPipe() *Listener {
	l := newListener(s.peers)
	s.mu.Lock()
	s.pipe = l
	s.mu.Unlock()
	return l
}

// DialContext connects to the server, whatever network and address say:
// over TCP to Addr, or in memory for a server from NewPipeServer (refused
// while the server is closed, as over TCP). With it a Server is a
// monolock.Config.Dialer.
func (s *Server) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	s.mu.Lock()
	pipe := s.pipe
	s.mu.Unlock()
	if s.peers != nil {
		return pipe.DialContext(ctx, "", "")
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", s.Addr)
}

func (s *Server) start(tb testing.TB, l net.Listener) {
	tb.Helper()
	srv, err := server.New(s.cfg)
	if err != nil {
		l.Close()
		tb.Fatalf("monolocktest: %v", err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(l)
	}()
	s.mu.Lock()
	s.srv, s.served, s.closed = srv, served, false
	s.mu.Unlock()
}

// Server returns the running server.Server (for metrics, ops handler,
// admin methods). After Restart it is a new one.
func (s *Server) Server() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

// Close stops the server hard, as a crash looks to clients: listeners and
// connections close without a goodbye frame. It waits until every server
// goroutine has exited. Closing twice is harmless.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	srv, served := s.srv, s.served
	s.mu.Unlock()
	srv.Close()
	<-served
}

// Restart closes the server and serves again, with a new lock table, on the
// same address. Before serving it waits for the wall clock (a bubble's fake
// one for a pipe server) to reach the next whole second, as a real restart
// would have to: fencing tokens continue above the previous server's only
// when the restart is more than a second after its last grant (see package
// locktable).
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Close()
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + time.Millisecond).Sub(now))
	if s.peers != nil {
		s.start(tb, s.newPipe())
		return
	}
	var l net.Listener
	var err error
	// The port was just freed; another process could grab it, so a few
	// attempts absorb transient errors but not a stolen port.
	for range 50 {
		if l, err = listen(s.Addr); err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		tb.Fatalf("monolocktest: restart on %s: %v", s.Addr, err)
	}
	s.start(tb, l)
}

// listen listens as cmd/monolock does: without TCP keep-alive on the
// accepted connections (leases bound every silence).
func listen(addr string) (net.Listener, error) {
	return (&net.ListenConfig{KeepAlive: -1}).Listen(context.Background(), "tcp", addr)
}
