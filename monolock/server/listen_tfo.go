package server

import "net"

// fastOpenQueue is the listener's TCP Fast Open queue: how many connections
// whose SYN carried data may wait for the end of their handshake at once.
// Beyond it the kernel falls back to a normal handshake for new ones; no
// connection is refused for it.
const fastOpenQueue = 1024

// enableFastOpenOn turns TCP Fast Open on for l when Config.TCPFastOpen is
// set. Where the socket option fails (not Linux, not a TCP listener) or the
// kernel's net.ipv4.tcp_fastopen setting keeps server-side TFO off, it
// warns and serves without it: clients then complete a normal handshake.
func (s *Server) enableFastOpenOn(l net.Listener) {
	if !s.cfg.TCPFastOpen {
		return
	}
	if err := enableFastOpen(l, fastOpenQueue); err != nil {
		s.log.Warn("monolock: TCP Fast Open not enabled on the listener; serving without it", "addr", l.Addr().String(), "err", err)
		return
	}
	if ok, setting := kernelFastOpenServer(); !ok {
		s.log.Warn("monolock: the kernel keeps TCP Fast Open off for listeners (net.ipv4.tcp_fastopen lacks 0x2); clients fall back to a normal handshake", "addr", l.Addr().String(), "net.ipv4.tcp_fastopen", setting)
		return
	}
	s.log.Info("monolock: TCP Fast Open enabled on the listener", "addr", l.Addr().String())
}
