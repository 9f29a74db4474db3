package server

// ParkedSockets returns the socket numbers of the sessions parked in the
// poller, by session id: for tests that need to see a number reused.
func ParkedSockets(s *Server) map[uint64]int {
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	parked := make(map[uint64]int)
	for _, ss := range sessions {
		ss.mu.Lock()
		if ss.parked {
			ss.raw.Control(func(fd uintptr) { parked[ss.id] = int(fd) })
		}
		ss.mu.Unlock()
	}
	return parked
}
