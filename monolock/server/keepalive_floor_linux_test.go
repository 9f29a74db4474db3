package server_test

import (
	"net"
	"runtime"
	"syscall"
	"testing"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// BenchmarkKeepAliveFloor is BenchmarkServerKeepAlives's physical floor:
// the same child process and schedule, answered by the least a server
// can do per keep-alive over TCP — one thread in a blocking epoll_wait (as
// Redis's event loop waits), then for each ready socket one read and one
// write of the answer, nothing else (no lock table, no lease, no metrics).
// Its server-cpu-ns/heartbeat beside the server's shows how much of the
// server's cost per keep-alive is its own and how much is the kernel's
// and the runtime's, which no server of this protocol can avoid.
func BenchmarkKeepAliveFloor(b *testing.B) {
	benchmarkKeepAlives(b, func(b *testing.B) string {
		f := startKeepAliveFloor(b)
		b.Cleanup(f.stop) // after the child's sessions closed
		return f.addr
	})
}

// keepAliveFloor grants every ACQUIRE (token 1) on the accepting goroutine,
// then hands the socket to one epoll loop that answers each HEARTBEAT
// byte with the grant's frame, as the server does.
type keepAliveFloor struct {
	addr           string
	ln             net.Listener
	epfd           int
	wake           [2]int     // a pipe whose write ends the loop
	conns          []net.Conn // owned by accept until accepted is closed
	accepted, done chan struct{}
}

func startKeepAliveFloor(b *testing.B) *keepAliveFloor {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	f := &keepAliveFloor{addr: ln.Addr().String(), ln: ln, epfd: epfd, accepted: make(chan struct{}), done: make(chan struct{})}
	if err := syscall.Pipe2(f.wake[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		b.Fatal(err)
	}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, f.wake[0], &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(f.wake[0])}); err != nil {
		b.Fatal(err)
	}
	go f.accept()
	go f.loop()
	return f
}

// accept reads each connection's ACQUIRE, answers it and registers the
// socket (a dup of it, in blocking Go's hands no more) with the loop.
func (f *keepAliveFloor) accept() {
	defer close(f.accepted)
	granted := protocol.AppendAcquired(nil, 1)
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.conns = append(f.conns, c)
		if _, err := protocol.ReadType(c); err != nil {
			c.Close()
			continue
		}
		if _, err := protocol.ReadAcquire(c); err != nil {
			c.Close()
			continue
		}
		if _, err := c.Write(granted); err != nil {
			c.Close()
			continue
		}
		raw, _ := c.(*net.TCPConn).SyscallConn()
		var fd int
		raw.Control(func(s uintptr) { fd, _ = syscall.Dup(int(s)) })
		syscall.SetNonblock(fd, true)
		syscall.EpollCtl(f.epfd, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)})
	}
}

// loop is the floor: epoll_wait, then per ready socket one read and one
// write of one answer per HEARTBEAT byte read.
func (f *keepAliveFloor) loop() {
	runtime.LockOSThread()
	defer close(f.done)
	granted := protocol.AppendAcquired(nil, 1)
	events := make([]syscall.EpollEvent, 128)
	in := make([]byte, 64)
	out := make([]byte, 0, 64*len(granted))
	for {
		n, err := syscall.EpollWait(f.epfd, events, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == f.wake[0] {
				return
			}
			r, err := syscall.Read(fd, in)
			if r <= 0 || err != nil {
				syscall.Close(fd) // also leaves the epoll set
				continue
			}
			out = out[:0]
			for range r {
				out = append(out, granted...)
			}
			syscall.Write(fd, out)
		}
	}
}

func (f *keepAliveFloor) stop() {
	f.ln.Close()
	<-f.accepted
	syscall.Write(f.wake[1], []byte{0})
	<-f.done
	for _, c := range f.conns {
		c.Close()
	}
	syscall.Close(f.epfd)
	syscall.Close(f.wake[0])
	syscall.Close(f.wake[1])
}
