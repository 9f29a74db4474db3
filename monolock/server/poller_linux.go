package server

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// An idle plain-socket session waits in one epoll instance shared by the
// server, not in a goroutine of its own: a goroutine's stack and record
// were two thirds of an idle session's memory. The poller's one goroutine
// waits in Go's own poller (an epoll instance is itself pollable: no
// thread blocks in epoll_wait; one that did cost about 1 µs more per
// keep-alive); a session with bytes to read it serves itself (poller.serve)
// as long as that cannot block: a non-blocking read of heartbeats, their
// answers written by one non-blocking write that completes, and the session
// parked again, which costs no system call. Anything else (another frame,
// the peer's close, a push holding the writer, a write that does not
// complete at once, the session's end) goes on in a short-lived goroutine
// (event.serve) that answers as the reading goroutine would, so that a
// peer that does not read stalls its own session only.
//
// Each socket is registered once, edge-triggered, and keyed by the
// session's id, never its socket's number: a number is reused by the next
// connection once closed (closing the socket removes it from the epoll
// instance). Registering, reading and the poller's writes happen inside the
// socket's RawConn (Control, Read), which holds the socket open meanwhile,
// so that none can reach another connection that took its number; each is
// one non-blocking system call, so a Close waits for no more than that.
//
// TLS sessions keep a reading goroutine: crypto/tls buffers decrypted
// records of its own, which the socket's readiness does not show.

// pollerEvents is how many ready sessions one epoll_wait returns at most.
const pollerEvents = 128

// poller waits for the bytes of idle sessions.
type poller struct {
	srv      *Server
	epfd     int
	file     *os.File // epfd, waited on by Go's poller; closed by stop
	stopping atomic.Bool
	stopped  chan struct{}
	ready    []syscall.EpollEvent // guarded by file's read lock

	mu   sync.Mutex
	free []*event // events done with; not a sync.Pool, which drops some under -race
}

// idleSessions is the server's poller, started by its first plain-socket
// session. Guarded by Server.mu.
type idleSessions struct {
	p      *poller
	failed bool // epoll was unavailable: every session reads with a goroutine
}

// idlePoller returns the server's poller, starting it if need be; nil when
// epoll is unavailable or the server is shutting down.
func (s *Server) idlePoller() *poller {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle.p == nil && !s.idle.failed && !s.shuttingDown.Load() {
		p, err := newPoller(s)
		if err != nil {
			s.idle.failed = true
			s.log.Warn("monolock: no epoll; every idle session keeps a goroutine", "err", err)
		}
		s.idle.p = p
	}
	if s.shuttingDown.Load() {
		return nil
	}
	return s.idle.p
}

// stopPoller stops the poller once no session can park any more: every
// session has ended.
func (s *Server) stopPoller() {
	s.mu.Lock()
	p := s.idle.p
	s.idle.p = nil
	s.mu.Unlock()
	if p != nil {
		p.stop()
	}
}

func newPoller(s *Server) (*poller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := syscall.SetNonblock(epfd, true); err != nil {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	file := os.NewFile(uintptr(epfd), "epoll") // non-blocking: registered with Go's poller
	raw, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return nil, err
	}
	p := &poller{srv: s, epfd: epfd, file: file, stopped: make(chan struct{}), ready: make([]syscall.EpollEvent, pollerEvents)}
	go p.run(raw)
	return p, nil
}

// stop closes the epoll instance, which ends run, and waits for run to
// return. Called once, when no session can park any more.
func (p *poller) stop() {
	p.stopping.Store(true)
	p.file.Close()
	<-p.stopped
}

// run dispatches ready sessions until stop. Go's poller wakes it whenever
// the epoll instance has events.
func (p *poller) run(raw syscall.RawConn) {
	defer close(p.stopped)
	if err := raw.Read(p.dispatch); err != nil && !p.stopping.Load() {
		// Not expected; parked sessions then end with their leases.
		p.srv.log.Error("monolock: the poller failed; idle sessions are no longer read", "err", err)
	}
}

// dispatch serves the ready sessions without waiting (serve), every event
// of one epoll_wait before the next, and reports false (wait for more) once
// none is left.
func (p *poller) dispatch(epfd uintptr) bool {
	for {
		n, err := syscall.EpollWait(int(epfd), p.ready, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			p.srv.log.Error("monolock: epoll_wait failed; idle sessions are no longer read", "err", os.NewSyscallError("epoll_wait", err))
			return true
		}
		for _, ev := range p.ready[:n] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if ss := p.srv.session(id); ss != nil && ss.unpark() {
				p.serve(ss)
			}
		}
		if n < len(p.ready) {
			return false
		}
	}
}

// wait hands the session, idle after its handshake, to the poller, or to
// a reading goroutine where the poller cannot serve it (TLS, a connection
// without a socket, no epoll). It reports false when the session ended
// first, for the caller to finish it.
//
// The socket is registered once, edge-triggered (EPOLLET): an event means
// bytes arrived (or the peer closed) since the last one, and nothing re-arms
// it. An event for a session that is being served is not lost: it sets
// pending, and whoever serves the session reads once more before parking
// it (repark).
func (ss *session) wait() bool {
	sc, ok := ss.conn.(syscall.Conn) // a *tls.Conn is not one
	var p *poller
	if ok {
		p = ss.srv.idlePoller()
	}
	if p == nil {
		go ss.read()
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		ss.readFailed(err)
		return false
	}
	ss.raw = raw // before the session is parked: read by the poller after
	e := p.event(ss)
	defer e.release()
	return e.register()
}

// unpark takes the session from the poller to serve its event. It reports
// false for an event of a session that is not parked: one being served,
// which then reads once more before parking (pending), or one that ended
// (finishParked took it).
func (ss *session) unpark() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.parked {
		ss.pending = true
		return false
	}
	ss.parked = false
	return true
}

// Outcomes of repark.
const (
	parkedAgain = iota // idle in the poller
	readAgain          // an event came meanwhile: read once more
	parkEnding         // the session is ending: the caller finishes it
)

// repark parks the session again after a read that left no bytes behind,
// unless an event came meanwhile (read again) or the session is ending.
func (ss *session) repark() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.ending:
		return parkEnding
	case ss.pending:
		ss.pending = false
		return readAgain
	}
	ss.parked = true
	return parkedAgain
}

// event is the work on one session between two parks: its reads and its
// answers. Events are reused with their callbacks bound once, so that a
// keep-alive allocates nothing.
type event struct {
	p        *poller
	ss       *session
	buf      [readBufSize]byte
	n        int   // bytes in buf
	err      error // of the read that filled buf
	handled  bool  // buf's frames are handled and their answers queued
	mustRead bool  // serve reads first: buf is done with
	errno    error // of the system call in a callback
	out      []byte
	written  int
	reg      syscall.EpollEvent

	serveFunc    func()
	readFunc     func(fd uintptr) bool
	registerFunc func(fd uintptr)
	writeFunc    func(fd uintptr)
}

// event returns an event for ss, a free one if there is one: there are
// as many as sessions were ever served at once.
func (p *poller) event(ss *session) *event {
	p.mu.Lock()
	var e *event
	if n := len(p.free); n > 0 {
		e, p.free = p.free[n-1], p.free[:n-1]
	}
	p.mu.Unlock()
	if e == nil {
		e = &event{p: p}
		e.serveFunc, e.readFunc, e.registerFunc, e.writeFunc = e.serve, e.read, e.registerFd, e.write
	}
	e.ss = ss
	return e
}

func (e *event) release() {
	e.ss, e.out = nil, nil
	e.p.mu.Lock()
	e.p.free = append(e.p.free, e)
	e.p.mu.Unlock()
}

// register adds the session's socket to the epoll instance, edge-triggered,
// and parks the session. It reports false when the session is ending (or
// its socket is gone), for the caller to finish it: an ending session is
// never parked, so that finishParked and park cannot both miss it.
func (e *event) register() bool {
	ss := e.ss
	ss.mu.Lock()
	if ss.ending {
		ss.mu.Unlock()
		return false
	}
	e.errno = nil
	e.reg = syscall.EpollEvent{
		Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | epollET,
		Fd:     int32(uint32(ss.id)),
		Pad:    int32(uint32(ss.id >> 32)),
	}
	// Under ss.mu, so that the poller cannot unpark the session before it
	// is marked parked, and no end of the session slips between the check
	// above and the registration.
	err := ss.raw.Control(e.registerFunc)
	if err == nil && e.errno != nil {
		err = os.NewSyscallError("epoll_ctl", e.errno)
	}
	ss.parked = err == nil
	ss.mu.Unlock()
	if err != nil {
		ss.readFailed(err)
		return false
	}
	return true
}

// registerFd runs inside the socket's Control: its number is still its own.
func (e *event) registerFd(fd uintptr) {
	e.errno = syscall.EpollCtl(e.p.epfd, syscall.EPOLL_CTL_ADD, int(fd), &e.reg)
}

// inlineReads bounds the reads the poller does for one session's event
// before it hands the session to a goroutine.
const inlineReads = 4

// serve serves the session the poller unparked on the poller's goroutine,
// as long as that cannot block: non-blocking reads of heartbeats only, and
// each answer written by one non-blocking write that completes. Anything
// else (another frame, the peer's close, wmu held by a push, a write that
// does not complete at once, the session ending) goes on in a goroutine of
// its own (event.serve), so that a peer that stops reading stalls its own
// session only. This saves the common keep-alive a goroutine start.
func (p *poller) serve(ss *session) {
	e := p.event(ss)
	inline := true
	defer func() {
		if inline {
			if r := recover(); r != nil {
				go ss.finish(r)
				e.release()
			}
		}
	}()
	for range inlineReads {
		e.readOnce()
		e.mustRead, e.handled = false, false
		if e.err != nil || !heartbeatsOnly(e.buf[:e.n]) {
			break
		}
		for range e.n {
			ss.frame(protocol.TypeHeartbeat)
		}
		e.handled = true
		if !e.tryFlush() {
			break
		}
		if e.n == len(e.buf) {
			e.mustRead = true // there may be more
			continue
		}
		switch ss.repark() {
		case parkedAgain:
			e.release()
			return
		case readAgain:
			e.mustRead = true
			continue
		}
		break // ending
	}
	inline = false
	go e.serveFunc()
}

func heartbeatsOnly(b []byte) bool {
	for _, t := range b {
		if protocol.Type(t) != protocol.TypeHeartbeat {
			return false
		}
	}
	return true
}

// tryFlush writes the queued answers on the poller, if it can without
// blocking: wmu free, the session not ending, and one non-blocking write
// (inside the socket's Control: no deadline applies) that writes them all.
// It reports false otherwise, with what is left queued first, for flush.
func (e *event) tryFlush() bool {
	ss := e.ss
	if !ss.wmu.TryLock() {
		return false
	}
	defer ss.wmu.Unlock()
	ss.mu.Lock()
	if ss.ending || ss.finished {
		ss.mu.Unlock()
		return false
	}
	buf := ss.out
	ss.out, ss.spare = ss.spare[:0], nil
	ss.mu.Unlock()
	if len(buf) == 0 {
		ss.spare = buf
		return true
	}
	e.out, e.written, e.errno = buf, 0, nil
	err := ss.raw.Control(e.writeFunc)
	n := e.written
	e.out = nil
	if err == nil && e.errno == nil && n == len(buf) {
		ss.spare = buf
		return true
	}
	// Not all written: the rest goes first, ahead of what was queued
	// meanwhile, for flush to write (or fail on) with its deadline.
	ss.mu.Lock()
	queued := ss.out
	buf = append(buf[:copy(buf, buf[n:])], queued...)
	ss.out, ss.spare = buf, queued[:0]
	ss.mu.Unlock()
	return false
}

// write runs inside the socket's Control: one non-blocking write(2).
func (e *event) write(fd uintptr) {
	n, err := syscall.Write(int(fd), e.out)
	e.written, e.errno = max(n, 0), err
}

// serve is the session's goroutine when the poller cannot serve it without
// blocking: it handles (or flushes) what the poller read, reads on until
// the socket has nothing left, parks the session again, or finishes it.
func (e *event) serve() {
	ss := e.ss
	parked := false
	defer func() {
		if !parked {
			ss.finish(recover())
		}
	}()
	defer e.release()
	for {
		if e.mustRead {
			e.readOnce()
			e.handled = false
		}
		e.mustRead = true
		if e.handled {
			ss.flush()
		} else if !ss.frames(e.buf[:e.n]) {
			return
		}
		if e.err != nil {
			ss.readFailed(e.err)
			return
		}
		if e.n == len(e.buf) {
			continue // there may be more
		}
		switch ss.repark() {
		case parkedAgain:
			parked = true
			return
		case parkEnding:
			return
		}
	}
}

// readOnce reads into e.buf with one non-blocking system call: e.n is 0
// and e.err nil when there are no bytes (a spurious wake-up), e.err is
// io.EOF when the peer has closed.
func (e *event) readOnce() {
	e.n, e.err, e.errno = 0, nil, nil
	if err := e.ss.raw.Read(e.readFunc); err != nil {
		e.n, e.err = 0, err // closed by the session's end
		return
	}
	switch {
	case e.errno == syscall.EAGAIN || e.errno == syscall.EINTR:
		e.n = 0
	case e.errno != nil:
		e.n, e.err = 0, os.NewSyscallError("read", e.errno)
	case e.n == 0:
		e.err = io.EOF
	}
}

// read runs inside the socket's RawConn.Read: one system call, done, so
// that a Close waits for no more than that.
func (e *event) read(fd uintptr) bool {
	e.n, e.errno = syscall.Read(int(fd), e.buf[:])
	return true
}

// epollET is EPOLLET as the uint32 the event's field is (syscall's constant
// is negative).
const epollET = 1 << 31
