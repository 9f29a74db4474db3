//go:build !linux

package server

// idleSessions is empty: the poller is Linux only (poller_linux.go).
type idleSessions struct{}

// wait hands the session, idle after its handshake, to a reading
// goroutine of its own. It reports true: the session is handed off.
func (ss *session) wait() bool {
	go ss.read()
	return true
}

func (s *Server) stopPoller() {}
