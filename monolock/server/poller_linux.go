package server

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// An idle plain-socket session waits in one epoll instance shared by the
// server, not in a goroutine of its own: a goroutine's stack and record
// were two thirds of an idle session's memory. The poller's one goroutine
// waits in Go's own poller (an epoll instance is itself pollable: no
// thread blocks in epoll_wait; one that did cost about 1 µs more per
// keep-alive); for each session with bytes to read it starts a short-lived
// goroutine (event.serve) that reads them once, answers as the reading
// goroutine would, and parks the session again. The answer is written off
// the poller, so that a peer that does not read stalls its own session
// only.
//
// Each registration is one-shot and keyed by the session's id, never its
// socket's number: a number is reused by the next connection once closed.
// Registering and reading happen inside the socket's RawConn (Control,
// Read), which holds the socket open meanwhile, so that neither can reach
// another connection that took its number; a read is one non-blocking
// system call, so a Close waits for no more than that.
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

// dispatch takes the ready sessions without waiting, starts a goroutine
// for each, and reports false (wait for more) once none is left.
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
				go p.event(ss).serveFunc()
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
	ss.raw = raw // before the session is parked: read by the poller's goroutines after
	e := p.event(ss)
	defer e.release()
	return e.park(syscall.EPOLL_CTL_ADD)
}

// unpark takes the session from the poller for the goroutine that serves
// its event. It reports false for an event that lost the race with the
// session's end (finishParked took it).
func (ss *session) unpark() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.parked {
		return false
	}
	ss.parked = false
	return true
}

// event is the work on one session between two parks: its read, its
// answer and its re-arming. Events are reused with their callbacks bound
// once, so that a keep-alive allocates nothing.
type event struct {
	p     *poller
	ss    *session
	buf   [readBufSize]byte
	n     int
	errno error // of the system call in read or register
	op    int   // register's epoll_ctl operation
	reg   syscall.EpollEvent

	serveFunc    func()
	readFunc     func(fd uintptr) bool
	registerFunc func(fd uintptr)
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
		e.serveFunc, e.readFunc, e.registerFunc = e.serve, e.read, e.register
	}
	e.ss = ss
	return e
}

func (e *event) release() {
	e.ss = nil
	e.p.mu.Lock()
	e.p.free = append(e.p.free, e)
	e.p.mu.Unlock()
}

// park registers (op EPOLL_CTL_ADD) or re-arms (EPOLL_CTL_MOD) the
// session's socket for its next bytes, or the peer's close, once. It
// reports false when the session is ending (or its socket is gone), for
// the caller to finish it: an ending session is never parked, so that
// finishParked and park cannot both miss it.
func (e *event) park(op int) bool {
	ss := e.ss
	ss.mu.Lock()
	if ss.ending {
		ss.mu.Unlock()
		return false
	}
	e.op, e.errno = op, nil
	e.reg = syscall.EpollEvent{
		Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT,
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

// register runs inside the socket's Control: its number is still its own.
func (e *event) register(fd uintptr) {
	e.errno = syscall.EpollCtl(e.p.epfd, e.op, int(fd), &e.reg)
}

// serve is the session's goroutine for one event: it reads once, answers
// (frames, as the reading goroutine does), and parks the session again,
// or finishes it.
func (e *event) serve() {
	ss := e.ss
	parked := false
	defer func() {
		if !parked {
			ss.finish(recover())
		}
	}()
	defer e.release()
	n, err := e.readOnce()
	if !ss.frames(e.buf[:n]) {
		return
	}
	if err != nil {
		ss.readFailed(err)
		return
	}
	parked = e.park(syscall.EPOLL_CTL_MOD)
}

// readOnce reads into e.buf with one non-blocking system call: no bytes
// and no error when there are none (a spurious wake-up), io.EOF when the
// peer has closed.
func (e *event) readOnce() (int, error) {
	e.n, e.errno = 0, nil
	if err := e.ss.raw.Read(e.readFunc); err != nil {
		return 0, err // closed by the session's end
	}
	switch {
	case e.errno == syscall.EAGAIN || e.errno == syscall.EINTR:
		return 0, nil
	case e.errno != nil:
		return 0, os.NewSyscallError("read", e.errno)
	case e.n == 0:
		return 0, io.EOF
	}
	return e.n, nil
}

// read runs inside the socket's RawConn.Read: one system call, done, so
// that a Close waits for no more than that.
func (e *event) read(fd uintptr) bool {
	e.n, e.errno = syscall.Read(int(fd), e.buf[:])
	return true
}
