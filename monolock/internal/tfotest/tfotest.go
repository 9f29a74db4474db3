//go:build linux

// Package tfotest lets tests exercise TCP Fast Open on loopback without
// touching the host's settings. Server-side TFO needs the bit 0x2 of the
// sysctl net.ipv4.tcp_fastopen, which many hosts leave off (the default is
// 1: client only). The setting belongs to the network namespace, so Enter
// re-runs the calling test in a private one (its own loopback, its own
// sysctl set to 3, its own TFO counters) when the host's does not allow it.
package tfotest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

const (
	envChild = "MONOLOCK_TFOTEST_NETNS" // set in the re-run test process
	sysctl   = "/proc/sys/net/ipv4/tcp_fastopen"
	// tcpiOptSynData is TCPI_OPT_SYN_DATA of tcp_info.tcpi_options: the
	// data of the SYN was acknowledged (client) or accepted (server).
	tcpiOptSynData = 0x20
)

// Setting returns net.ipv4.tcp_fastopen of the current network namespace.
func Setting() (int, error) {
	b, err := os.ReadFile(sysctl)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Enter prepares a TCP Fast Open test. It returns true when the caller
// should run the test body here: the host's namespace already allows TFO
// on both sides (setting has 0x3), or this process is the re-run inside a
// private network namespace that Enter has just configured. Otherwise it
// re-runs the test (t.Name(), a top-level test) in a private namespace,
// reports that run's outcome as this test's and returns false; it skips,
// with the reason, when no namespace can be made.
func Enter(t *testing.T) bool {
	t.Helper()
	if os.Getenv(envChild) == "1" {
		if err := setupNamespace(); err != nil {
			t.Fatalf("tfotest: setting up the private network namespace: %v", err)
		}
		return true
	}
	v, err := Setting()
	if err == nil && v&3 == 3 {
		return true
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("tfotest: net.ipv4.tcp_fastopen=%d keeps server-side TFO off here and the test binary cannot re-run itself: %v", v, err)
	}
	cmd := exec.Command(exe, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envChild+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(out) > 0 {
			t.Fatalf("tfotest: the run in a private network namespace failed (%v):\n%s", err, out)
		}
		t.Skipf("tfotest: net.ipv4.tcp_fastopen=%d keeps server-side TFO off in this namespace (needs 0x2; this test does not change the host's setting: `sysctl -w net.ipv4.tcp_fastopen=3` runs it here), and no private network namespace could be made: %v", v, err)
	}
	if bytes.Contains(out, []byte("--- SKIP")) {
		t.Skipf("tfotest: skipped in the private network namespace:\n%s", out)
	}
	t.Logf("tfotest: host net.ipv4.tcp_fastopen=%d; ran in a private network namespace with 3:\n%s", v, out)
	return false
}

// setupNamespace enables TFO on both sides and brings loopback up in the
// fresh network namespace this process runs in.
func setupNamespace() error {
	if err := os.WriteFile(sysctl, []byte("3\n"), 0o644); err != nil {
		return err
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr struct {
		name  [syscall.IFNAMSIZ]byte
		flags uint16
		_     [22]byte
	}
	copy(ifr.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return os.NewSyscallError("SIOCGIFFLAGS", e)
	}
	ifr.flags |= syscall.IFF_UP
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return os.NewSyscallError("SIOCSIFFLAGS", e)
	}
	return nil
}

// Counter returns the kernel's TcpExt counter name (for example
// "TCPFastOpenPassive": connections accepted with data in the SYN) from
// /proc/net/netstat of the current network namespace.
func Counter(name string) (int64, error) {
	f, err := os.Open("/proc/net/netstat")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		keys := strings.Fields(sc.Text())
		if !sc.Scan() {
			break
		}
		vals := strings.Fields(sc.Text())
		if len(keys) == 0 || keys[0] != "TcpExt:" || len(vals) != len(keys) {
			continue
		}
		for i, k := range keys {
			if k == name {
				return strconv.ParseInt(vals[i], 10, 64)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("tfotest: no TcpExt counter %s", name)
}

// SynData reports whether the SYN of c's connection carried data that the
// other side accepted (TCP_INFO's TCPI_OPT_SYN_DATA), on either end. c is
// a *net.TCPConn, or anything with NetConn (a *tls.Conn) around one.
func SynData(c net.Conn) (bool, error) {
	for {
		nc, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = nc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false, fmt.Errorf("tfotest: %T has no socket", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, err
	}
	var info syscall.TCPInfo
	var serr error
	if err := rc.Control(func(fd uintptr) {
		n := uint32(unsafe.Sizeof(info))
		_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO, uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&n)), 0)
		if e != 0 {
			serr = os.NewSyscallError("getsockopt TCP_INFO", e)
		}
	}); err != nil {
		return false, err
	}
	return info.Options&tcpiOptSynData != 0, serr
}
