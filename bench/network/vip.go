package network

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/monolock/monolock-bench/bench"
)

// VirtualIP is an address of the network that one host holds at a time,
// as the virtual IP of an active–passive pair (keepalived's VRRP
// address): clients dial it, the line delivers its packets to the host
// that holds it, and Move gives it to another host. The holder carries it
// as a second address of its link, so that its kernel answers at it (a
// server must listen on every address of its host, or on this one).
//
// A move without keep is a takeover: the old host loses the address, and
// from then on every packet to it, of an old connection as of a new one,
// reaches the new host, whose kernel answers a segment of a connection it
// never had with a reset. A move with keep is a load balancer's or DNS
// switch: the connections the line saw open before the move (by their
// SYN) keep going to the old host, which keeps the address; only new
// ones reach the new host.
//
// Its methods are safe for concurrent use.
type VirtualIP struct {
	net  *Network
	slot *Host // reserves the address's index; it has no link

	mu      sync.Mutex
	to      *Host
	holders []*Host // hosts whose link carries the address
	closed  bool
}

// VirtualIP gives a new virtual IP of the host's network to the host;
// it implements bench.VirtualIPServer's method for the backends' servers.
func (h *Host) VirtualIP() (bench.VirtualIP, error) {
	v, err := h.net.AddVirtualIP(h)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// AddVirtualIP takes a free address of the network and gives it to h.
func (n *Network) AddVirtualIP(h *Host) (*VirtualIP, error) {
	if h.net != n || h.internal {
		return nil, fmt.Errorf("network: host %s is not a host of this network", h.name)
	}
	slot, err := n.reserveAddress()
	if err != nil {
		return nil, err
	}
	v := &VirtualIP{net: n, slot: slot}
	if err := v.Move(h.IP(), false); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

// reserveAddress takes the next free host index for an address without a
// link of its own. It is kept out of the names of hosts.
func (n *Network) reserveAddress() (*Host, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrClosed
	}
	for i := 1; i <= maxHosts; i++ {
		if n.hosts[i] == nil {
			h := &Host{net: n, name: "virtual ip " + strconv.Itoa(i), index: i, ip: runAddr(n.run, i+1), nsFD: -1, internal: true}
			n.hosts[i] = h
			return h, nil
		}
	}
	return nil, fmt.Errorf("network: no room for a virtual IP: %d hosts at most", maxHosts-1)
}

// IP returns the address.
func (v *VirtualIP) IP() netip.Addr { return v.slot.ip }

// Holder returns the host that new connections to the address reach.
func (v *VirtualIP) Holder() *Host {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.to
}

// Move gives the address to the host at the address to; see VirtualIP for
// keep.
func (v *VirtualIP) Move(to netip.Addr, keep bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return ErrClosed
	}
	h := v.net.hostAt(to)
	if h == nil {
		return fmt.Errorf("network: no host at %s to move %s to", to, v.IP())
	}
	if !slices.Contains(v.holders, h) {
		if err := h.carry(v.IP(), true); err != nil {
			return err
		}
		v.holders = append(v.holders, h)
	}
	if _, err := v.net.line.call(request{Op: "vip", Index: v.slot.index, To: h.index, Keep: keep}, -1); err != nil {
		return err
	}
	v.to = h
	if keep {
		return nil
	}
	var errs []error
	for _, old := range v.holders {
		if old != h {
			errs = append(errs, old.carry(v.IP(), false))
		}
	}
	v.holders = []*Host{h}
	return errors.Join(errs...)
}

// Close takes the address off every host and frees it. A closed
// network's line is gone already.
func (v *VirtualIP) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	v.closed = true
	var errs []error
	if !v.net.isClosed() {
		_, err := v.net.line.call(request{Op: "vip", Index: v.slot.index}, -1)
		errs = append(errs, err)
	}
	for _, h := range v.holders {
		if err := h.carry(v.IP(), false); !errors.Is(err, ErrClosed) {
			errs = append(errs, err)
		}
	}
	v.holders = nil
	v.net.forget(v.slot)
	return errors.Join(errs...)
}

// hostAt returns the host with address ip, or nil.
func (n *Network) hostAt(ip netip.Addr) *Host {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, h := range n.hosts {
		if h != nil && !h.internal && h.ip == ip {
			return h
		}
	}
	return nil
}

// carry adds (or removes) ip as a second address of the host's link.
func (h *Host) carry(ip netip.Addr, add bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.nl == nil {
		return ErrClosed
	}
	link, err := h.nl.LinkByName(hostLinkName(h.net.prefix))
	if err != nil {
		return fmt.Errorf("network: host %s: find its link: %w", h.name, err)
	}
	a := &netlink.Addr{IPNet: &net.IPNet{IP: ip.AsSlice(), Mask: net.CIDRMask(32, 32)}}
	if add {
		err = h.nl.AddrAdd(link, a)
	} else if err = h.nl.AddrDel(link, a); errors.Is(err, unix.EADDRNOTAVAIL) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("network: host %s: address %s: %w", h.name, ip, err)
	}
	return nil
}

// In the line: where a virtual IP's packets go.

// vipRoute is the line's state of one virtual IP: the host new
// connections reach, and the host each TCP connection was opened on.
type vipRoute struct {
	to    int
	flows map[flowKey]int
}

// flowKey is one TCP connection to a virtual IP, by its client's end and
// the port it reached.
type flowKey struct {
	src          [4]byte
	sport, dport uint16
}

// setVIP routes the virtual IP at index i to host to (0: removes it); a
// move without keep forgets which host each connection was opened on, so
// that all of them reach the new host.
func (l *line) setVIP(i, to int, keep bool) {
	v := l.vips[i]
	switch {
	case to == 0:
		l.vips[i] = nil
		return
	case v == nil:
		v = &vipRoute{flows: map[flowKey]int{}}
		l.vips[i] = v
	case !keep:
		clear(v.flows)
	}
	v.to = to
}

// deliver returns the host a packet to the virtual IP goes to: the one
// its connection was opened on, the current holder for a new connection
// (a SYN) and for anything else.
func (v *vipRoute) deliver(pkt []byte) int {
	ihl := int(pkt[0]&0x0f) * 4
	if pkt[9] != unix.IPPROTO_TCP || len(pkt) < ihl+14 {
		return v.to
	}
	k := flowKey{src: [4]byte(pkt[12:16]), sport: binary.BigEndian.Uint16(pkt[ihl:]), dport: binary.BigEndian.Uint16(pkt[ihl+2:])}
	const syn, ack = 0x02, 0x10
	if f := pkt[ihl+13]; f&syn != 0 && f&ack == 0 {
		v.flows[k] = v.to
		return v.to
	}
	if to, ok := v.flows[k]; ok {
		return to
	}
	return v.to
}
