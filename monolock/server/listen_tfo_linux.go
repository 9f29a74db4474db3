package server

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// tcpFastOpen is the Linux socket option TCP_FASTOPEN (not in package
// syscall): on a listener, the length of its Fast Open queue.
const tcpFastOpen = 23

// enableFastOpen sets TCP_FASTOPEN with queue length qlen on l's socket.
// Linux accepts it on a socket that already listens.
func enableFastOpen(l net.Listener, qlen int) error {
	sc, ok := l.(syscall.Conn)
	if !ok {
		return fmt.Errorf("listener %T has no socket", l)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpFastOpen, qlen)
	}); err != nil {
		return err
	}
	if serr != nil {
		return os.NewSyscallError("setsockopt TCP_FASTOPEN", serr)
	}
	return nil
}

// kernelFastOpenServer reports whether net.ipv4.tcp_fastopen (of this
// network namespace) has the server bit 0x2, and the setting as read. An
// unreadable setting counts as enabled: the kernel then decides alone.
func kernelFastOpenServer() (bool, string) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_fastopen")
	if err != nil {
		return true, "unknown"
	}
	v := strings.TrimSpace(string(b))
	n, err := strconv.Atoi(v)
	if err != nil {
		return true, v
	}
	return n&2 != 0, v
}
