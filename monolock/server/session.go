package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/locktable"
	"github.com/monolock/monolock-bench/monolock/internal/tlsconfig"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// lingerTimeout bounds how long a session that sent an ERROR keeps reading
// (and discarding) after half-closing, so that unread client bytes do not
// turn the close into a reset that destroys the ERROR in flight.
const lingerTimeout = 500 * time.Millisecond

// handshakeBufSize is enough for any valid ACQUIRE in one read.
const handshakeBufSize = 1 + 1 + 4 + 2 + protocol.MaxNameLen

var handshakeBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, handshakeBufSize) }}

// session is one connection, served by one goroutine at a time: serve for
// the handshake; then, for a plain socket on Linux, the poller itself or a
// short-lived goroutine when bytes arrive (poller_linux.go), and none
// while the session is idle (parked); otherwise read until the end. Frames
// are queued in out under mu, in the order the session's state changes,
// and written by flush under wmu, so there is one writer at a time: the
// reader itself for answers (no hand-off on the hot path), or a
// short-lived goroutine for a push (promotion, admin, shutdown), since the
// table notifies under its lock and must not block.
type session struct {
	srv    *Server
	conn   net.Conn        // the TLS connection when TLS is on
	raw    syscall.RawConn // conn's socket while the poller serves it; else nil
	id     uint64
	remote string

	wmu       sync.Mutex // held while writing
	spare     []byte     // the last written buffer, reused; guarded by wmu
	wdeadline time.Time  // the write deadline last set; guarded by wmu

	mu        sync.Mutex
	claim     *locktable.Claim // set before the claim enters the table
	out       []byte           // frames not yet written
	token     uint64           // the grant's token once owned
	owned     bool             // the claim owns its lock
	answered  bool             // the ACQUIRE was answered: promotions are pushed from now on
	ending    bool             // no more frames are queued; the next flush closes
	lingering bool             // an ERROR was queued: half-close and drain rather than close
	parked    bool             // idle in the poller, with no goroutine: whoever unparks it serves or finishes it
	pending   bool             // the poller saw bytes arrive while the session was not parked: read again before parking
	reason    locktable.Reason // why the session ended

	// Last, with the flags above, so that an idle session's struct fits a
	// smaller allocation class (176 bytes, not 192).
	finished bool // the final close step was taken; guarded by wmu
}

func newSession(s *Server, conn net.Conn) *session {
	remote := conn.RemoteAddr().String()
	if s.cfg.TLSConfig != nil {
		// Wrapped now so that ss.conn never changes; the handshake is
		// completed explicitly under the io-timeout by the reader.
		conn = tls.Server(conn, s.cfg.TLSConfig)
	}
	return &session{
		srv:    s,
		conn:   conn,
		id:     s.nextID.Add(1),
		remote: remote,
	}
}

// serve is the session's first goroutine: it completes the handshake, then
// hands the idle session on (wait) and exits: the handshake's calls (TLS,
// the lock table, the audit log) grow a goroutine's stack to 4-8 KiB, which
// the runtime keeps for as long as the goroutine lives. Whoever holds the
// session next is its only reader.
func (ss *session) serve() {
	handedOff := false
	defer func() {
		if !handedOff {
			ss.finish(recover())
		}
	}()
	if !ss.handshake() {
		return
	}
	handedOff = ss.wait()
}

// read is the session's goroutine after the handshake where no poller
// serves it (TLS, other systems): it reads frames until the session ends,
// then finishes it. The read loop fits the 2 KiB a new goroutine starts
// with.
func (ss *session) read() {
	defer func() { ss.finish(recover()) }()
	ss.readLoop(make([]byte, readBufSize))
}

// readBufSize is one read of frames after the ACQUIRE, each one byte: a
// client has at most one heartbeat in flight, so 16 is plenty, and it is
// held by every idle session.
const readBufSize = 16

// finish is the session's last step, on its goroutine, after a panic p
// (nil: none): it writes what is queued, closes or half-closes and drains,
// and releases the claim.
func (ss *session) finish(p any) {
	s := ss.srv
	defer s.active.Done()
	defer s.untrackSession(ss)
	if p != nil {
		s.log.Error("monolock: session panic", "session", ss.id, "remote", ss.remote, "panic", p, "stack", string(debug.Stack()))
		ss.end(locktable.Graceful, nil)
	}
	ss.flush() // the final step: write what is queued, then close or half-close
	ss.drain()
	ss.conn.Close()
	// The session's own release, in case the claim entered the table
	// after another goroutine ended the session; otherwise a no-op.
	ss.mu.Lock()
	c, reason := ss.claim, ss.reason
	ss.mu.Unlock()
	if c != nil {
		s.table.Release(c, reason)
	}
}

// handshake completes TLS, reads and answers the ACQUIRE, all under the
// io-timeout. It reports whether the session continues.
func (ss *session) handshake() bool {
	s := ss.srv
	identity := "" // empty without mTLS
	if tc, ok := ss.conn.(*tls.Conn); ok {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.IOTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			s.metrics.tlsHandshakeErrors.Inc()
			s.log.Debug("monolock: TLS handshake failed", "remote", ss.remote, "err", err)
			ss.end(reasonOf(err), nil)
			return false
		}
		identity = tlsconfig.PeerIdentity(tc.ConnectionState())
	}
	br := handshakeBufs.Get().(*bufio.Reader)
	br.Reset(ss.conn)
	defer func() {
		br.Reset(nil)
		handshakeBufs.Put(br)
	}()
	// The first byte is awaited for one io-timeout (a connection that never
	// speaks), the rest of the frame for one io-timeout after it arrives.
	ss.setReadDeadline(time.Now().Add(s.cfg.IOTimeout))
	t, err := protocol.ReadType(br)
	if err != nil {
		ss.readFailed(err)
		return false
	}
	if t != protocol.TypeAcquire {
		ss.end(locktable.Graceful, protocol.ErrFirstNotAcquire)
		return false
	}
	if !acquireBuffered(br) { // the usual ACQUIRE arrives whole: no deadline to move
		ss.setReadDeadline(time.Now().Add(s.cfg.IOTimeout))
	}
	acq, err := protocol.ReadAcquire(br)
	if err != nil {
		ss.readFailed(err)
		return false
	}
	if br.Buffered() > 0 {
		// The client pipelined frames after its ACQUIRE: handle them as
		// violations or heartbeats before reading on.
		rest, _ := br.Peek(br.Buffered())
		if !ss.acquire(acq, identity) || !ss.frames(rest) {
			return false
		}
	} else if !ss.acquire(acq, identity) {
		return false
	}
	// From here on every frame is one byte (its type), so no frame can
	// stall half-read: silence is bounded by the lease alone.
	ss.setReadDeadline(time.Time{})
	return true
}

// acquireBuffered reports whether br holds the whole rest of an ACQUIRE
// after its type byte (version 1, lease 4, name length 2, name), so that
// reading it cannot block.
func acquireBuffered(br *bufio.Reader) bool {
	const head = 1 + 4 + 2
	if br.Buffered() < head {
		return false
	}
	h, _ := br.Peek(head)
	return br.Buffered() >= head+int(binary.BigEndian.Uint16(h[5:7]))
}

// acquire enters the claim of the client with identity in the table and
// answers with its state.
func (ss *session) acquire(acq protocol.Acquire, identity string) bool {
	s := ss.srv
	if !s.authorized(identity, ss.remote, acq.Name) {
		ss.end(locktable.Graceful, protocol.ErrNotAuthorized)
		return false
	}
	c := &locktable.Claim{
		Session:    ss.id,
		Name:       acq.Name,
		Identity:   identity,
		RemoteAddr: ss.remote,
		Lease:      acq.Lease(),
		Notifier:   ss,
	}
	ss.mu.Lock()
	ss.claim = c
	ss.mu.Unlock()
	token, granted, err := s.table.Acquire(c)
	if err != nil { // the table is closed: shutting down
		ss.end(locktable.Shutdown, protocol.ErrShuttingDown)
		return false
	}
	ss.mu.Lock()
	if granted {
		ss.owned, ss.token = true, token
	}
	ss.answered = true
	ss.queueStateLocked()
	ss.mu.Unlock()
	ss.flush()
	if s.log.Enabled(context.Background(), slog.LevelDebug) { // spare the hot path the arguments
		s.log.Debug("monolock: acquire", "session", ss.id, "remote", ss.remote, "lock", acq.Name, "lease", acq.Lease(), "granted", granted, "token", token)
	}
	return true
}

// readLoop reads frames until the session ends. Every frame after the
// ACQUIRE is one byte, so one read delivers whole frames; their answers
// are written together.
func (ss *session) readLoop(buf []byte) {
	for {
		n, err := ss.conn.Read(buf)
		if !ss.frames(buf[:n]) {
			return
		}
		if err != nil {
			ss.readFailed(err)
			return
		}
	}
}

// frames handles frames after the ACQUIRE and writes their answers. It
// reports whether the session continues.
func (ss *session) frames(types []byte) bool {
	if len(types) == 0 {
		return true
	}
	defer ss.flush()
	for _, t := range types {
		if !ss.frame(protocol.Type(t)) {
			return false
		}
	}
	return true
}

// frame handles one frame after the ACQUIRE, queueing its answer. It
// reports whether the session continues.
func (ss *session) frame(t protocol.Type) bool {
	switch t {
	case protocol.TypeHeartbeat:
		ss.claim.Touch()
		ss.srv.metrics.heartbeats.Inc()
		ss.mu.Lock()
		ss.queueStateLocked()
		ss.mu.Unlock()
		return true
	case protocol.TypeAcquire:
		ss.end(locktable.Graceful, protocol.ErrDuplicateAcquire)
	default:
		ss.end(locktable.Graceful, &protocol.Error{Code: protocol.CodeUnknownType, Reason: fmt.Sprintf("unknown message type: 0x%02x", uint8(t))})
	}
	return false
}

// readFailed ends the session after a failed read: a protocol violation is
// answered with its ERROR; a timeout is io_timeout; anything else (EOF,
// reset, or the connection closed by the session's own end) is graceful.
func (ss *session) readFailed(err error) {
	if perr, ok := errors.AsType[*protocol.Error](err); ok {
		ss.end(locktable.Graceful, perr)
		return
	}
	ss.end(reasonOf(err), nil)
}

func reasonOf(err error) locktable.Reason {
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return locktable.IOTimeout
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return locktable.IOTimeout
	}
	return locktable.Graceful
}

// queueStateLocked queues the answer to a valid frame: the session's current
// state. Caller holds ss.mu.
func (ss *session) queueStateLocked() {
	if ss.ending {
		return
	}
	if ss.owned {
		ss.out = protocol.AppendAcquired(ss.out, ss.token)
	} else {
		ss.out = protocol.AppendWaiting(ss.out)
	}
}

// Promoted implements locktable.Notifier: the claim now owns its lock. The
// ACQUIRED is pushed at once, unless the ACQUIRE is still unanswered, in
// which case the answer carries it. Called under the table's lock.
func (ss *session) Promoted(token uint64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.owned, ss.token = true, token
	if ss.answered && !ss.ending {
		ss.out = protocol.AppendAcquired(ss.out, token)
		ss.push()
	}
}

// Ended implements locktable.Notifier: the table removed the claim (lease
// expired, or force-release/kick). Called under the table's lock, so it must
// not call the table: the claim is already out of it.
func (ss *session) Ended(reason locktable.Reason) {
	var perr *protocol.Error
	if reason == locktable.Force {
		perr = protocol.ErrClosedByAdmin
		ss.mu.Lock()
		kicked, name, identity := !ss.owned, ss.claim.Name, ss.claim.Identity
		ss.mu.Unlock()
		if kicked { // a force-released owner is audited by onRelease
			ss.srv.auditKick(name, identity, ss.remote)
		}
	}
	if ss.stop(reason, perr) {
		ss.push()
	}
}

// end ends the session for reason, queueing perr first when non-nil, and
// releases its claim at once (promoting the next waiter). Safe to call from
// any goroutine, any number of times; the first call wins. The caller sees
// to a flush: the reader does one on its way out, others push.
func (ss *session) end(reason locktable.Reason, perr *protocol.Error) {
	if !ss.stop(reason, perr) {
		return
	}
	ss.mu.Lock()
	c := ss.claim
	ss.mu.Unlock()
	if c != nil {
		ss.srv.table.Release(c, reason)
	}
}

// stop marks the session ending and queues perr; the next flush writes it
// and closes. It does not touch the table. It reports whether this call ended
// the session.
func (ss *session) stop(reason locktable.Reason, perr *protocol.Error) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ending {
		return false
	}
	ss.ending, ss.reason = true, reason
	if perr != nil {
		ss.out = protocol.AppendError(ss.out, perr.Code, perr.Reason)
		ss.lingering = true
		ss.srv.metrics.protocolErrors[perr.Code].Inc()
	}
	name := ""
	if ss.claim != nil {
		name = ss.claim.Name
	}
	if ss.srv.log.Enabled(context.Background(), slog.LevelDebug) {
		code := ""
		if perr != nil {
			code = fmt.Sprintf("0x%02x", uint8(perr.Code))
		}
		ss.srv.log.Debug("monolock: session ends", "session", ss.id, "remote", ss.remote, "lock", name, "reason", reason.String(), "error_code", code)
	}
	return true
}

// setReadDeadline sets the read deadline unless the session is ending, when
// the writer owns the deadline (the linger).
func (ss *session) setReadDeadline(t time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.ending {
		ss.conn.SetReadDeadline(t)
	}
}

// push flushes from a new goroutine, for callers that must not block: the
// table's notifications and the server's shutdown; a session it ends while
// parked, it finishes. It is counted in Server.active; the session is
// still counted whenever push is called, so the count is positive.
func (ss *session) push() {
	ss.srv.active.Add(1)
	go func() {
		defer ss.srv.active.Done()
		defer ss.finishParked()
		defer func() {
			if p := recover(); p != nil {
				ss.srv.log.Error("monolock: session push panic", "session", ss.id, "remote", ss.remote, "panic", p, "stack", string(debug.Stack()))
				ss.end(locktable.Graceful, nil)
				ss.conn.Close()
			}
		}()
		ss.flush()
	}()
}

// finishParked finishes the session if it has ended while parked: no
// goroutine of its own is left to see its end (closing a socket wakes no
// epoll waiter). A session not parked is finished by the goroutine that
// holds it, which sees ending when it would park. Called after ending it.
func (ss *session) finishParked() {
	ss.mu.Lock()
	take := ss.ending && ss.parked
	if take {
		ss.parked = false
	}
	ss.mu.Unlock()
	if take {
		ss.finish(nil)
	}
}

// flush writes the queued frames, each write bounded by the io-timeout,
// and, once the session is ending and nothing is left to write, takes the
// final step: after an ERROR, half-close and let the reader drain for the
// linger; otherwise close. A failed write ends the session.
func (ss *session) flush() {
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	for !ss.finished {
		ss.mu.Lock()
		buf := ss.out
		ss.out, ss.spare = ss.spare[:0], nil
		ending, lingering := ss.ending, ss.lingering
		ss.mu.Unlock()
		if len(buf) > 0 {
			ss.boundWrite()
			_, err := ss.conn.Write(buf)
			ss.spare = buf
			if err != nil {
				ss.end(reasonOf(err), nil)
				ss.finished = true
				ss.conn.Close()
			}
			continue // frames may have been queued meanwhile
		}
		ss.spare = buf
		if !ending {
			return
		}
		ss.finished = true
		if cw, ok := ss.conn.(interface{ CloseWrite() error }); ok && lingering {
			cw.CloseWrite()
			ss.conn.SetReadDeadline(time.Now().Add(lingerTimeout))
		} else {
			ss.conn.Close()
		}
	}
}

// boundWrite bounds the next write by the io-timeout. Moving the deadline
// updates a runtime timer, which at a heartbeat per answer was a tenth of
// the server's own work per keep-alive, so it moves only once less than
// half an io-timeout is left: a write then gives up at most one io-timeout
// after it starts, and at least half of one. Caller holds wmu.
func (ss *session) boundWrite() {
	now := time.Now()
	if ss.wdeadline.Sub(now) >= ss.srv.cfg.IOTimeout/2 {
		return
	}
	ss.wdeadline = now.Add(ss.srv.cfg.IOTimeout)
	ss.conn.SetWriteDeadline(ss.wdeadline)
}

// drain discards input until the connection is closed, the linger deadline
// passes or the client closes; it runs once the session is ending.
func (ss *session) drain() {
	buf := make([]byte, readBufSize)
	for {
		if _, err := ss.conn.Read(buf); err != nil {
			return
		}
	}
}
