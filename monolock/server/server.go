// Package server is the monolock lock server: protocol v1 over TCP (or TLS),
// one claim per connection, FIFO queues with push promotion, leases as
// sliding windows of silence, global fencing tokens, graceful shutdown and
// an ops HTTP surface (/metrics, /healthz, /readyz).
//
// A request's path: Serve accepts a connection and starts its session
// (session.go); the session reads the ACQUIRE (package protocol), enters a
// claim in the lock table (internal/locktable), and answers; an idle
// plain-TCP session then waits in the poller (poller_linux.go) without a
// goroutine until its next frame; the table calls the session back when the
// claim is promoted or ended, and the session's writer pushes the frame.
//
// The package imports the standard library only.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/locktable"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// DefaultIOTimeout bounds one read of a started frame, one write and one
// handshake when Config.IOTimeout is zero.
const DefaultIOTimeout = 5 * time.Second

// Config configures a Server. The zero value is a plaintext server with the
// defaults below.
type Config struct {
	// IOTimeout bounds the reading of one started frame, one write, and the
	// handshake of a new connection (TLS, then the ACQUIRE frame). A peer
	// that exceeds it ends its own session (release reason io_timeout). A
	// write gives up no later than IOTimeout after it started, and no
	// sooner than half of it (its deadline is moved once per half
	// IOTimeout, not per answer).
	// Default DefaultIOTimeout (5s) when zero; negative is an error.
	IOTimeout time.Duration
	// Logger receives diagnostics. Default slog.Default().
	Logger *slog.Logger
	// TLSConfig, when non-nil, makes every connection TLS; the handshake is
	// completed explicitly under IOTimeout and failures are counted. Nil:
	// plaintext.
	TLSConfig *tls.Config

	// TLSCertFile and TLSKeyFile, when set, serve TLS from these PEM files
	// (instead of TLSConfig, which must then be nil); TLSClientCAFile
	// additionally requires and verifies client certificates signed by
	// these CAs (mTLS). A client's identity is the first URI SAN of its
	// verified certificate, else the first DNS SAN, else the CN; it is
	// shown in the admin API and the audit log, and empty without mTLS.
	// Reload re-reads the files. Default: empty (plaintext, or TLSConfig).
	TLSCertFile, TLSKeyFile, TLSClientCAFile string
	// ACLFile, when set, is a JSON ACL checked on every ACQUIRE:
	// {"rules":[{"identity":"glob","locks":["glob",...]}]}, deny by
	// default, `*` any run (including `/`), `?` one character. A denied
	// lock gets ERROR 0x18 and is counted, logged and audited. Requires
	// TLSClientCAFile. Reload re-reads it. Default: empty (all allowed).
	ACLFile string
	// AuditLog, when set, is where the audit log goes: a file path
	// (appended to) or "-" for standard output. One JSON line per grant,
	// release, ACL denial, force-release and kick; for one lock a released
	// line always precedes the next granted. Reload reopens the file (log
	// rotation). Default: empty (no audit log).
	//
	// Lines are written by a goroutine of their own, never under the lock
	// table's mutex: a stalled sink (a full disk, a blocked stdout pipe)
	// does not stall acquisitions. Up to AuditQueue events wait for it;
	// beyond that, events are dropped and counted in
	// monolock_audit_dropped_total (and the first drop is logged) while
	// locks keep being granted and released.
	AuditLog string
	// AuditQueue bounds the audit events waiting for the audit sink.
	// Default 65536 when zero or negative.
	AuditQueue int
	// Listen and OpsListen are the configured protocol and ops HTTP
	// addresses, reported as config.listen and config.ops_listen by the
	// admin API's GET /api/info. The Server does not listen on them itself
	// (Serve takes a listener; OpsHandler is served by the caller). Default:
	// empty; an empty Listen, or one with port 0, reports the addresses
	// of the listeners in Serve instead.
	Listen, OpsListen string
	// TCPFastOpen, when true, makes Serve accept TCP Fast Open on its
	// listener (TCP_FASTOPEN, Linux): a client that dials with TFO and holds
	// a cookie from an earlier connection sends its ACQUIRE (or its TLS
	// ClientHello) in the SYN, and the answer leaves one round trip
	// earlier. The kernel must allow it too: net.ipv4.tcp_fastopen needs
	// the server bit 0x2 (for example 3); otherwise, or on other systems,
	// Serve logs a warning and clients fall back to a normal handshake.
	//
	// The cost of a replayed SYN: data in a SYN may be delivered twice
	// (a duplicated or retransmitted packet arriving after the original
	// connection has ended), and each copy opens a connection whose
	// ACQUIRE the server enters in the queue, a connection the client
	// never sees. The client's host answers that connection's SYN-ACK with
	// a reset, which ends the session and releases its claim: the lock is
	// held or queued for a phantom for about one round trip (at most the
	// lease, should every reset be lost), a fencing token is used up, and
	// the grant and its release appear in metrics and the audit log. No
	// two clients ever own the lock at once. Default false.
	TCPFastOpen bool
}

// Errors callers branch on.
var (
	// ErrServerClosed is returned by Serve after Shutdown or Close.
	ErrServerClosed = errors.New("monolock: server closed")
	// ErrNotHeld is returned by ForceRelease when the lock has no owner.
	ErrNotHeld = locktable.ErrNotHeld
	// ErrNoSuchWaiter is returned by Kick when the lock has no waiter with
	// that remote address.
	ErrNoSuchWaiter = locktable.ErrNoSuchWaiter
)

// LockInfo describes a live lock (one with an owner or waiters): its name,
// its holder (nil only while shutting down) and its waiters in queue order.
type LockInfo = locktable.Lock

// Holder describes the owner of a lock: lock name, session id, identity, remote
// address, since (grant time), lease and fencing token.
type Holder = locktable.Holder

// Waiter describes a queued claim: session id, identity, remote address,
// queued-at time and lease.
type Waiter = locktable.Waiter

// Stats are live counts for dashboards and the admin API.
type Stats struct {
	Connections int // open protocol connections, in any state
	Locks       int // locks with an owner or waiters
	LocksHeld   int
	Waiters     int
}

// Server is a monolock server. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	ops     *ops // TLS files, ACL, audit log: see ops.go
	log     *slog.Logger
	table   *locktable.Table
	metrics serverMetrics
	nextID  atomic.Uint64

	shuttingDown atomic.Bool
	serving      atomic.Int32 // listeners in Serve, for /readyz

	mu        sync.Mutex
	closing   chan struct{} // closed when shutdown begins; wakes accept back-off
	listeners map[net.Listener]struct{}
	sessions  map[uint64]*session // by id: the poller's key
	idle      idleSessions        // the poller of idle plain-TCP sessions (Linux)
	active    sync.WaitGroup      // sessions (each counted once, parked or not) and pushes
}

// New returns a Server that is not yet serving.
func New(cfg Config) (*Server, error) {
	if cfg.IOTimeout < 0 {
		return nil, fmt.Errorf("monolock: io-timeout must be positive, got %v", cfg.IOTimeout)
	}
	if cfg.IOTimeout == 0 {
		cfg.IOTimeout = DefaultIOTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	o, err := openOps(&cfg, cfg.Logger)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       cfg,
		ops:       o,
		log:       cfg.Logger,
		closing:   make(chan struct{}),
		listeners: make(map[net.Listener]struct{}),
		sessions:  make(map[uint64]*session),
	}
	s.table = locktable.New(locktable.Config{OnGrant: s.onGrant, OnRelease: s.onRelease})
	return s, nil
}

// onGrant observes every grant, under the table's lock (so, per lock, after
// the release that made it possible).
func (s *Server) onGrant(h locktable.Holder, waited time.Duration) {
	s.metrics.acquires.Inc()
	s.metrics.waitSeconds.Observe(waited.Seconds())
	s.auditGrant(h, waited)
}

// onRelease observes every end of an ownership, under the table's lock.
// An ownership ended by the server's shutdown is counted and audited as
// graceful: the documented reasons are graceful, expired, io_timeout and
// force, and a shutdown is the server closing the session in order, with
// ERROR 0x01.
func (s *Server) onRelease(h locktable.Holder, held time.Duration, reason locktable.Reason) {
	if reason == locktable.Shutdown {
		reason = locktable.Graceful
	}
	s.metrics.holdSeconds.Observe(held.Seconds())
	s.metrics.releases[reason].Inc()
	s.auditRelease(h, held, reason)
}

// Serve accepts connections on l until Shutdown or Close, and always returns
// a non-nil error: ErrServerClosed after Shutdown or Close, otherwise the
// error that made l unusable (net.ErrClosed when someone else closed it).
// Accept failures such as EMFILE/ENFILE are counted and retried with a
// back-off from 5ms to 1s; Serve does not exit on them. Serve closes l when
// it returns. Leases and the io-timeout bound every silence, so TCP
// keep-alive only costs system calls: listen with net.ListenConfig's
// KeepAlive -1, as cmd/monolock does.
func (s *Server) Serve(l net.Listener) error {
	if !s.trackListener(l) {
		l.Close()
		return ErrServerClosed
	}
	s.enableFastOpenOn(l)
	s.serving.Add(1)
	defer func() {
		s.serving.Add(-1)
		s.untrackListener(l)
		l.Close()
	}()
	var delay time.Duration
	for {
		conn, err := l.Accept()
		if err != nil {
			if s.shuttingDown.Load() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			s.metrics.acceptErrors.Inc()
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("monolock: accept failed; retrying", "err", err, "retry_in", delay)
			select {
			case <-time.After(delay):
			case <-s.closing:
			}
			continue
		}
		delay = 0
		s.metrics.accepted.Inc()
		sess := newSession(s, conn)
		if !s.trackSession(sess) {
			conn.Close()
			return ErrServerClosed
		}
		go sess.serve()
	}
}

func (s *Server) trackListener(l net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shuttingDown.Load() {
		return false
	}
	s.listeners[l] = struct{}{}
	return true
}

func (s *Server) untrackListener(l net.Listener) {
	s.mu.Lock()
	delete(s.listeners, l)
	s.mu.Unlock()
}

// trackSession registers a new session and accounts for its reader.
func (s *Server) trackSession(sess *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shuttingDown.Load() {
		return false
	}
	s.sessions[sess.id] = sess
	s.active.Add(1)
	s.metrics.connections.Add(1)
	return true
}

func (s *Server) untrackSession(sess *session) {
	s.mu.Lock()
	delete(s.sessions, sess.id)
	s.mu.Unlock()
	s.metrics.connections.Add(-1)
}

// beginShutdown flips /healthz to 503, stops accepting and stops promotions.
// It returns the sessions open at that moment; no new ones are added.
func (s *Server) beginShutdown() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.shuttingDown.Swap(true) {
		close(s.closing)
	}
	for l := range s.listeners {
		l.Close()
	}
	s.table.Close()
	sessions := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	return sessions
}

// session returns the live session with id, or nil.
func (s *Server) session(id uint64) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// Shutdown stops the server gracefully: /healthz answers 503 at once, the
// listeners close, no waiter is promoted from then on, every session gets
// ERROR 0x01 (server shutting down) and is closed. It returns when every
// session has ended and the audit log has written its queue, or with
// ctx.Err() when ctx ends first, after closing the remaining connections
// hard.
func (s *Server) Shutdown(ctx context.Context) error {
	for _, sess := range s.beginShutdown() {
		sess.end(locktable.Shutdown, protocol.ErrShuttingDown)
		sess.push()
	}
	done := make(chan struct{})
	go func() {
		s.active.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.stopPoller()
		s.closeOps(ctx)
		return ctx.Err()
	case <-ctx.Done():
		s.closeAll() // ends every session: none parks again
		s.stopPoller()
		s.closeOps(ctx)
		return ctx.Err()
	}
}

// Close stops the server at once: listeners and connections are closed
// without a goodbye frame, as in a crash seen from the clients. It returns
// when every session goroutine has exited and the audit log has written
// its queue, or has had one io-timeout to do so.
func (s *Server) Close() error {
	s.beginShutdown()
	s.closeAll()
	s.active.Wait()
	s.stopPoller()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.IOTimeout)
	defer cancel()
	s.closeOps(ctx)
	return nil
}

func (s *Server) closeAll() {
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.mu.Unlock()
	for _, sess := range sessions {
		sess.end(locktable.Shutdown, nil)
		sess.conn.Close()
		sess.finishParked()
	}
}

// ShuttingDown reports whether Shutdown or Close has begun.
func (s *Server) ShuttingDown() bool { return s.shuttingDown.Load() }

// Locks describes every live lock whose name satisfies match (every lock
// when match is nil), sorted by name. match must not call the Server.
func (s *Server) Locks(match func(name string) bool) []LockInfo {
	return s.table.Snapshot(match)
}

// Lock describes the named lock; ok is false when it has neither owner nor
// waiters.
func (s *Server) Lock(name string) (info LockInfo, ok bool) { return s.table.Lookup(name) }

// ForceRelease ends the ownership of the named lock: the owner gets ERROR
// 0x02 (closed by administrator) and is disconnected, the release is counted
// with reason force, and the head waiter is promoted. It returns the token of
// the released ownership, or ErrNotHeld.
func (s *Server) ForceRelease(name string) (uint64, error) {
	return s.table.ForceRelease(name)
}

// Kick removes the first waiter of the named lock whose remote address is
// remoteAddr (host:port as listed by Lock): it gets ERROR 0x02 and is
// disconnected; the other waiters keep their order. It returns
// ErrNoSuchWaiter when there is none.
func (s *Server) Kick(name, remoteAddr string) error {
	return s.table.Kick(name, remoteAddr)
}

// Stats returns live counts.
func (s *Server) Stats() Stats {
	c := s.table.Counts()
	return Stats{Connections: int(s.metrics.connections.Load()), Locks: c.Locks, LocksHeld: c.Held, Waiters: c.Waiting}
}
