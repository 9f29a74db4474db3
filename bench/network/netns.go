package network

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// inNamespace runs f on an OS thread that has joined the network
// namespace nsFD, and returns f's error. Sockets and TUN devices f creates
// belong to that namespace and stay there. The thread is locked and never
// unlocked, so the runtime discards it when f returns instead of reusing a
// thread in a foreign namespace.
func inNamespace(nsFD int, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Setns(nsFD, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("network: join namespace: %w", err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// createNamespace creates a new network namespace, names it by
// bind-mounting it at /run/netns/name (as `ip netns add` does) and returns
// an open descriptor of it. Its loopback device is brought up by the
// caller.
func createNamespace(name string) (fd int, err error) {
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return -1, fmt.Errorf("network: %w", err)
	}
	path := filepath.Join(netnsDir, name)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return -1, fmt.Errorf("network: namespace %s: %w", name, err)
	}
	f.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: this thread leaves the bench's namespace
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("network: new namespace: %w", err)
			return
		}
		if err := unix.Mount("/proc/thread-self/ns/net", path, "", unix.MS_BIND, ""); err != nil {
			errc <- fmt.Errorf("network: name namespace %s: %w", name, err)
			return
		}
		errc <- nil
	}()
	if err := <-errc; err != nil {
		os.Remove(path)
		return -1, err
	}
	fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		removeNamespace(name)
		return -1, fmt.Errorf("network: open namespace %s: %w", name, err)
	}
	return fd, nil
}

// removeNamespace unnames the namespace; it goes away once no process and
// no descriptor refers to it any longer.
func removeNamespace(name string) error {
	path := filepath.Join(netnsDir, name)
	err := unix.Unmount(path, unix.MNT_DETACH)
	if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("network: unmount namespace %s: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("network: remove namespace %s: %w", name, err)
	}
	return nil
}
