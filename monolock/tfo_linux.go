package monolock

import "syscall"

// tcpFastOpenConnect is Linux's TCP_FASTOPEN_CONNECT (4.11+; not in package
// syscall): connect returns at once and the SYN leaves with the first
// write, carrying its data when a cookie from the server is cached; without
// a cookie the SYN asks for one and the handshake is a normal one.
const tcpFastOpenConnect = 30

// fastOpenControl enables TCP_FASTOPEN_CONNECT on a socket about to
// connect. It never fails the dial: where the kernel refuses the option
// (too old, TFO disabled for clients by net.ipv4.tcp_fastopen), the
// connection is made the usual way.
func fastOpenControl(_, _ string, c syscall.RawConn) error {
	c.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpFastOpenConnect, 1)
	})
	return nil
}
