// Package spreaddial opens TCP connections spread over several source
// and/or destination addresses, so that one bench process can hold more
// connections to one server than the ephemeral port range allows.
//
// Linux tells TCP connections apart by their 4-tuple: a connect from one
// source address to one destination address:port can use each port of
// net.ipv4.ip_local_port_range once (about 28k with the default
// 32768–60999). Every extra source address (Linux routes all of 127/8 to
// lo, so 127.0.0.2, 127.0.0.3, … need no setup) or destination address
// (an alias of the server, or a server listening on 0.0.0.0 reached as
// 127.0.0.x) adds another range. The package reads the host's sysctls and
// never changes them: Plan says what fits and what would have to change.
package spreaddial

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Dialer spreads connections round-robin over every (source, destination)
// pair. Its DialContext has the signature of net.Dialer.DialContext, so it
// fits monolock.Config.Dialer and, as a method value, go-redis's
// Options.Dialer. A Dialer is safe for concurrent use; its fields must not
// change after the first dial.
type Dialer struct {
	// Sources are the local addresses to bind before connecting. Default:
	// none (the kernel picks the source, one address per destination).
	Sources []netip.Addr
	// Destinations are the hosts to dial instead of the host of the
	// address asked for; the asked port is kept. Every one must reach the
	// same server. Default: none (dial the address asked for).
	Destinations []netip.Addr
	// Timeout bounds each connect, as net.Dialer.Timeout. Default: 0, no
	// bound other than the context.
	Timeout time.Duration

	next atomic.Uint64
}

// DialContext connects to addr over network ("tcp", "tcp4" or "tcp6")
// from the next source address to the next destination address.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	src, dst, err := d.route(addr)
	if err != nil {
		return nil, err
	}
	nd := net.Dialer{Timeout: d.Timeout}
	if src.IsValid() {
		nd.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
		// Without IP_BIND_ADDRESS_NO_PORT the kernel picks the port at
		// bind time, before it knows the destination, so each source
		// address would get one port range in total instead of one per
		// destination.
		nd.Control = bindNoPort
	}
	c, err := nd.DialContext(ctx, network, dst)
	if err != nil {
		if errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("spreaddial: %w (ephemeral ports from %v exhausted? add source or destination addresses; see Plan)", err, src)
		}
		return nil, err
	}
	return c, nil
}

// route picks the source address (invalid: let the kernel choose) and the
// destination host:port of the next dial.
func (d *Dialer) route(addr string) (netip.Addr, string, error) {
	n := d.next.Add(1) - 1
	pairs := uint64(max(len(d.Sources), 1) * max(len(d.Destinations), 1))
	n %= pairs
	var src netip.Addr
	if len(d.Sources) > 0 {
		src = d.Sources[n%uint64(len(d.Sources))]
		n /= uint64(len(d.Sources))
	}
	if len(d.Destinations) == 0 {
		return src, addr, nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return src, "", fmt.Errorf("spreaddial: %w", err)
	}
	return src, net.JoinHostPort(d.Destinations[n].String(), port), nil
}

func bindNoPort(_, _ string, rc syscall.RawConn) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	})
	if err != nil {
		return err
	}
	return serr
}

// Pairs is the number of (source, destination) pairs the Dialer spreads
// over: each gets its own ephemeral port range.
func (d *Dialer) Pairs() int { return max(len(d.Sources), 1) * max(len(d.Destinations), 1) }

// Loopback returns n consecutive loopback addresses from 127.0.0.1 on
// (n ≤ 254, the addresses of 127.0.0.0/24 other than .0 and .255). They
// need no configuration on Linux, which routes all of 127/8 to lo.
func Loopback(n int) ([]netip.Addr, error) {
	if n < 1 || n > 254 {
		return nil, fmt.Errorf("spreaddial: %d loopback addresses: want 1..254", n)
	}
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)})
	}
	return out, nil
}
