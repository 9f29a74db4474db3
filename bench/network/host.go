package network

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Host is one emulated host: a network namespace with one link to the
// line and one address. Its methods are safe for concurrent use.
type Host struct {
	net      *Network
	name     string
	index    int
	ip       netip.Addr
	internal bool // the calibration host

	mu      sync.Mutex
	nsName  string // the named namespace, "" for an attached one
	nsPath  string
	nsFD    int
	nl      *netlink.Handle // in the host's namespace
	profile Profile
	fault   Fault
	echo    *echoServer
	closed  bool
}

// setUp gives the host a new namespace and its link.
func (h *Host) setUp(params linkParams) error {
	var err error
	h.nsName = namespaceName(h.net.prefix, h.net.run, h.name)
	h.nsPath = filepath.Join(netnsDir, h.nsName)
	if h.nsFD, err = createNamespace(h.nsName); err != nil {
		return err
	}
	return h.link(params)
}

func openNamespace(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("network: open namespace %s: %w", path, err)
	}
	return fd, nil
}

// link creates the host's device in its namespace and hands it to the
// line.
func (h *Host) link(params linkParams) error {
	fd, err := newTUNIn(h.nsFD, hostLinkName(h.net.prefix), h.ip)
	if err != nil {
		return fmt.Errorf("network: host %s: %w", h.name, err)
	}
	_, err = h.net.line.call(request{Op: "link", Index: h.index, Link: params, Fault: h.fault}, fd)
	unix.Close(fd) // the line holds it now
	if err != nil {
		return err
	}
	if h.nl != nil {
		h.nl.Close()
	}
	h.nl, err = netlink.NewHandleAt(netns.NsHandle(h.nsFD))
	if err != nil {
		return fmt.Errorf("network: host %s: netlink: %w", h.name, err)
	}
	return nil
}

// tearDown releases what the host holds; the line's end is gone with the
// line or removed by Close.
func (h *Host) tearDown() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.echo != nil {
		h.echo.close()
		h.echo = nil
	}
	if h.nl != nil {
		h.nl.Close()
		h.nl = nil
	}
	if h.nsFD >= 0 {
		unix.Close(h.nsFD)
		h.nsFD = -1
	}
	if h.nsName != "" {
		return removeNamespace(h.nsName)
	}
	return nil
}

// Name returns the host's name.
func (h *Host) Name() string { return h.name }

// IP returns the host's address.
func (h *Host) IP() netip.Addr { return h.ip }

// Addr returns the host's address with port, as host:port.
func (h *Host) Addr(port int) string { return netip.AddrPortFrom(h.ip, uint16(port)).String() }

// Profile returns the host's link profile.
func (h *Host) Profile() Profile {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.profile
}

// Fault returns the host's current fault.
func (h *Host) Fault() Fault {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fault
}

// NamespacePath returns the file of the host's network namespace:
// /run/netns/<name> for a host of AddHost, /proc/<pid>/ns/net for an
// attached one.
func (h *Host) NamespacePath() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nsPath
}

// SetFault switches what the host's link drops, at once (packets held in
// the line included): DropAll is host loss, DropIn and DropOut one-sided
// partitions, NoFault heals.
func (h *Host) SetFault(f Fault) error {
	if f&^DropAll != 0 {
		return fmt.Errorf("network: unknown fault %d", f)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.update(context.Background(), h.profile, f)
}

// Drop drops every packet into the host (in) and out of it (out), as
// SetFault with DropIn and DropOut; false passes that direction again.
func (h *Host) Drop(in, out bool) error {
	f := NoFault
	if in {
		f |= DropIn
	}
	if out {
		f |= DropOut
	}
	return h.SetFault(f)
}

// Cut drops every packet to and from the host (cut) or heals it (host
// loss and its end, as SetFault with DropAll and NoFault).
func (h *Host) Cut(cut bool) error {
	if cut {
		return h.SetFault(DropAll)
	}
	return h.SetFault(NoFault)
}

// SetProfile changes the host's link profile from the next packet on; an
// RTT no host had before is first measured for its Compensation.
func (h *Host) SetProfile(ctx context.Context, p Profile) error {
	if p.IsLoopback() {
		return fmt.Errorf("network: host %s: a host on an emulated network cannot be loopback", h.name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.update(ctx, p, h.fault)
}

// update sends the profile and fault to the line, or keeps them for
// Attach when the host has no link yet; h.mu is held. The profile's
// compensation is known unless the profile is new.
func (h *Host) update(ctx context.Context, p Profile, f Fault) error {
	if h.closed {
		return ErrClosed
	}
	params, err := h.net.params(ctx, p)
	if err != nil {
		return fmt.Errorf("network: host %s: %w", h.name, err)
	}
	if h.nsFD >= 0 {
		if _, err := h.net.line.call(request{Op: "set", Index: h.index, Link: params, Fault: f}, -1); err != nil {
			return err
		}
	}
	h.profile, h.fault = p, f
	return nil
}

// Command returns a command that runs the program name with args inside
// the host's namespace; everything else about it (environment, process
// attributes, Wait, signals) is as with exec.CommandContext. It works
// through a shim: the bench's own executable joins the namespace and
// execs the program, which then runs under its own name and process id,
// so the executable must call ChildMain.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	path := name
	if !strings.Contains(name, "/") {
		lp, err := exec.LookPath(name)
		if err != nil {
			cmd.Err = err
		}
		path = lp
	}
	cmd.Args = append([]string{name, execArg, h.NamespacePath(), path, name}, args...)
	return cmd
}

// Do runs f on an OS thread inside the host's namespace, for sockets (a
// listener, a dialled connection) that must belong to the host; they stay
// in its namespace when f returns.
func (h *Host) Do(f func() error) error {
	h.mu.Lock()
	fd := -1
	if !h.closed {
		var err error
		if fd, err = unix.Dup(h.nsFD); err != nil {
			h.mu.Unlock()
			return fmt.Errorf("network: %w", err)
		}
	}
	h.mu.Unlock()
	if fd < 0 {
		return ErrClosed
	}
	defer unix.Close(fd)
	return inNamespace(fd, f)
}

// Listen announces on the host's namespace, as net.Listen.
func (h *Host) Listen(network, addr string) (net.Listener, error) {
	var l net.Listener
	err := h.Do(func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// DialContext connects from the host's namespace, as net.Dialer's.
func (h *Host) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := h.Do(func() error {
		var err error
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Sysctl sets a kernel setting of the host's namespace, such as
// "net.ipv4.tcp_fastopen" to "3" (only namespaced settings differ per
// host).
func (h *Host) Sysctl(key, value string) error {
	if strings.Contains(key, "..") || strings.Contains(key, "/") {
		return fmt.Errorf("network: bad sysctl name %q", key)
	}
	path := "/proc/sys/" + strings.ReplaceAll(key, ".", "/")
	return h.Do(func() error {
		if err := os.WriteFile(path, []byte(value), 0); err != nil {
			return fmt.Errorf("network: host %s: sysctl %s: %w", h.name, key, err)
		}
		return nil
	})
}

// Attach puts a reserved or attached host into the namespace of process
// pid, with the same address, profile and fault: for a container just
// started, or restarted with a new namespace. The old namespace, if any,
// loses its link.
func (h *Host) Attach(ctx context.Context, pid int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	if h.nsName != "" {
		return fmt.Errorf("network: host %s has a namespace of its own; only reserved and attached hosts attach", h.name)
	}
	path := "/proc/" + strconv.Itoa(pid) + "/ns/net"
	fd, err := openNamespace(path)
	if err != nil {
		return err
	}
	params, err := h.net.params(ctx, h.profile)
	if err != nil {
		unix.Close(fd)
		return err
	}
	oldFD, oldPath := h.nsFD, h.nsPath
	h.nsFD, h.nsPath = fd, path
	if err := h.link(params); err != nil {
		unix.Close(fd)
		h.nsFD, h.nsPath = oldFD, oldPath
		return err
	}
	if oldFD >= 0 {
		unix.Close(oldFD)
	}
	if h.echo != nil {
		h.echo.close() // it listened in the old namespace
		h.echo = nil
	}
	return nil
}

// Close removes the host from the network: its link, its echo listener
// and its namespace's name. Processes still running in the namespace keep
// it alive but unreachable.
func (h *Host) Close() error {
	n := h.net
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil
	}
	var errs []error
	if !n.isClosed() {
		_, err := n.line.call(request{Op: "remove", Index: h.index}, -1)
		errs = append(errs, err)
	}
	errs = append(errs, h.tearDown())
	n.forget(h)
	return errors.Join(errs...)
}

// txDropped returns the packets the host's kernel dropped in front of its
// device (the line did not read them in time).
func (h *Host) txDropped() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.nl == nil {
		return 0
	}
	l, err := h.nl.LinkByName(hostLinkName(h.net.prefix))
	if err != nil || l.Attrs().Statistics == nil {
		return 0
	}
	return l.Attrs().Statistics.TxDropped
}
