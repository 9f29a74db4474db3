package host

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"

	"github.com/prometheus/procfs"
)

// TimeWaitTo counts this network namespace's TCP sockets in TIME_WAIT whose
// remote end is one of addrs (host:port), from /proc/net/tcp and tcp6.
// A connection-per-claim client closes first and so keeps one TIME_WAIT
// socket per claim for 60s; when they fill the ephemeral port range,
// connect() slows down and fails. The count is the evidence.
func TimeWaitTo(addrs []string) (int, error) {
	want := map[netip.AddrPort]bool{}
	for _, a := range addrs {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			continue // a host name (external backend): not countable here
		}
		want[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] = true
	}
	if len(want) == 0 {
		return 0, nil
	}
	pfs, err := proc()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, read := range []func() (procfs.NetTCP, error){pfs.NetTCP, pfs.NetTCP6} {
		socks, err := read()
		if errors.Is(err, fs.ErrNotExist) {
			continue // no IPv6 in this kernel
		}
		if err != nil {
			return 0, fmt.Errorf("host: %w", err)
		}
		for _, s := range socks {
			if s.St != tcpTimeWait {
				continue
			}
			ip, ok := netip.AddrFromSlice(s.RemAddr)
			if ok && s.RemPort <= 0xffff && want[netip.AddrPortFrom(ip.Unmap(), uint16(s.RemPort))] {
				n++
			}
		}
	}
	return n, nil
}

// tcpTimeWait is the TIME_WAIT state in /proc/net/tcp's "st" column.
const tcpTimeWait = 0x06
