package monolock

import (
	"net"
	"syscall"
	"unsafe"
)

// tcpEstablished is TCP_ESTABLISHED in tcp_info.tcpi_state.
const tcpEstablished = 1

// connAlive reports whether a spare's TCP connection is still established
// (one getsockopt TCP_INFO, no I/O): a server that closed it after its
// io-timeout or on a restart has left it in CLOSE_WAIT (FIN received) or
// CLOSED (reset). Connections without a socket count as alive; a close the
// check misses is caught when the ACQUIRE gets no answer.
func connAlive(c net.Conn) bool {
	for {
		nc, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = nc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var info syscall.TCPInfo
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		n := uint32(unsafe.Sizeof(info))
		_, _, errno = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO, uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&n)), 0)
	}); err != nil {
		return false
	}
	return errno != 0 || info.State == tcpEstablished
}
