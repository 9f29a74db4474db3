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
// belong to that namespace and stay there.
//
// The thread goes back to the bench's namespace afterwards and returns to
// the runtime: a thread must not simply be discarded, since a child
// process started from it with a parent-death signal (as the backends
// start servers) would be killed with it (Go issue 27505). Only if it
// cannot go back does it stay locked, so that the runtime ends it rather
// than reuse it in a foreign namespace.
func inNamespace(nsFD int, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("network: own namespace: %w", err)
			return
		}
		defer unix.Close(home)
		if err := unix.Setns(nsFD, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("network: join namespace: %w", err)
			return
		}
		ferr := f()
		if unix.Setns(home, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- ferr
	}()
	return <-errc
}

// createNamespace creates a new network namespace, names it by
// bind-mounting it at /run/netns/name (as `ip netns add` does) and returns
// an open descriptor of it.
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
	home, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(path)
		return -1, fmt.Errorf("network: own namespace: %w", err)
	}
	defer unix.Close(home)
	// Unsharing gives the thread the new namespace; inNamespace takes it
	// home again afterwards.
	err = inNamespace(home, func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("network: new namespace: %w", err)
		}
		if err := unix.Mount("/proc/thread-self/ns/net", path, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("network: name namespace %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
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
