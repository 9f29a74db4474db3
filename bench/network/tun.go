package network

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// linkMTU is every TUN device's MTU: an Ethernet-sized wire, so that
// bulk transfers are cut into as many packets as on a real network.
const linkMTU = 1500

// txQueueLen is the kernel's queue in front of each TUN device, as a
// NIC's; packets it drops because the line did not read them in time
// show in the device's tx_dropped.
const txQueueLen = 1000

// openTUN creates the TUN device name in the calling thread's network
// namespace and returns its non-blocking descriptor. The device is not
// persistent: it vanishes with the last descriptor, so a line process
// killed by any means takes its devices with it.
func openTUN(name string) (int, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, fmt.Errorf("network: open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("network: TUN name %q: %w", name, err)
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("network: create TUN device %s: %w", name, err)
	}
	return fd, nil
}

// configureLink gives the device name the address addr/24 of its run's
// subnet (so that the bench and every host of the run are reached through
// it), an Ethernet MTU and no IPv6 link-local address, and brings it up
// together with the namespace's loopback device.
func configureLink(h *netlink.Handle, name string, addr netip.Addr) error {
	link, err := h.LinkByName(name)
	if err != nil {
		return fmt.Errorf("network: find %s: %w", name, err)
	}
	// Without an IPv6 address the kernel sends no IPv6 on the link, so
	// the line only ever sees IPv4. Kernels without IPv6 refuse the
	// setting, which then does not matter.
	_ = h.LinkSetIP6AddrGenMode(link, 1) // IN6_ADDR_GEN_MODE_NONE
	steps := []struct {
		what string
		do   func() error
	}{
		{"MTU", func() error { return h.LinkSetMTU(link, linkMTU) }},
		{"tx queue", func() error { return h.LinkSetTxQLen(link, txQueueLen) }},
		{"address", func() error {
			ip := addr.As4()
			return h.AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: net.IP(ip[:]), Mask: net.CIDRMask(24, 32)}})
		}},
		{"up", func() error { return h.LinkSetUp(link) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("network: %s %s: %w", name, s.what, err)
		}
	}
	lo, err := h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("network: find lo: %w", err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("network: lo up: %w", err)
	}
	return nil
}

// newTUNIn creates and configures a host's TUN device inside the
// namespace nsFD and returns its descriptor.
func newTUNIn(nsFD int, name string, addr netip.Addr) (int, error) {
	h, err := netlink.NewHandleAt(netns.NsHandle(nsFD))
	if err != nil {
		return -1, fmt.Errorf("network: netlink in host namespace: %w", err)
	}
	defer h.Close()
	fd := -1
	err = inNamespace(nsFD, func() error {
		var err error
		fd, err = openTUN(name)
		return err
	})
	if err != nil {
		return -1, err
	}
	if err := configureLink(h, name, addr); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// newBenchTUN creates and configures the bench's own TUN device in the
// root namespace (the calling process's) with the address addr/24 and the
// further source addresses sources, and returns its descriptor.
func newBenchTUN(name string, addr netip.Addr, sources []netip.Addr) (int, error) {
	h, err := netlink.NewHandle()
	if err != nil {
		return -1, fmt.Errorf("network: netlink: %w", err)
	}
	defer h.Close()
	fd, err := openTUN(name)
	if err != nil {
		return -1, err
	}
	if err := configureLink(h, name, addr); err != nil {
		unix.Close(fd)
		return -1, err
	}
	link, err := h.LinkByName(name)
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("network: find %s: %w", name, err)
	}
	for _, a := range sources {
		ip := a.As4()
		if err := h.AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: net.IP(ip[:]), Mask: net.CIDRMask(32, 32)}}); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("network: %s: source address %s: %w", name, a, err)
		}
	}
	return fd, nil
}

// subnetInUse reports whether a route of the root namespace already covers
// run k's subnet (someone else's network on 198.18.0.0/15).
func subnetInUse(k int) (bool, error) {
	routes, err := retryDump(func() ([]netlink.Route, error) { return netlink.RouteList(nil, netlink.FAMILY_V4) })
	if err != nil {
		return false, fmt.Errorf("network: list routes: %w", err)
	}
	subnet := netip.PrefixFrom(runAddr(k, 0), 24)
	for _, r := range routes {
		if r.Dst == nil {
			continue
		}
		ones, _ := r.Dst.Mask.Size()
		if ones == 0 {
			continue // a default route covers everything and is no conflict
		}
		ip, ok := netip.AddrFromSlice(r.Dst.IP.To4())
		if !ok {
			continue
		}
		if netip.PrefixFrom(ip, ones).Masked().Overlaps(subnet) {
			return true, nil
		}
	}
	return false, nil
}

// removeLink deletes a device of the root namespace by name; a missing
// one is no error.
func removeLink(name string) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return nil
		}
		return fmt.Errorf("network: find %s: %w", name, err)
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("network: delete %s: %w", name, err)
	}
	return nil
}

// retryDump repeats a netlink dump that another process's change
// interrupted (the kernel then marks the partial answer), a few times.
func retryDump[T any](dump func() ([]T, error)) ([]T, error) {
	for range 10 {
		items, err := dump()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			return items, err
		}
	}
	return dump()
}
