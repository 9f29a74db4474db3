package host

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
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
	n := 0
	for _, path := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		c, err := countTimeWait(path, want)
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, nil
}

// tcpTimeWait is the TIME_WAIT state in /proc/net/tcp's "st" column.
const tcpTimeWait = "06"

func countTimeWait(path string, want map[netip.AddrPort]bool) (int, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("host: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Scan() // header
	n := 0
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 4 || f[3] != tcpTimeWait {
			continue
		}
		if ap, ok := parseProcAddr(f[2]); ok && want[ap] {
			n++
		}
	}
	return n, s.Err()
}

// parseProcAddr decodes a /proc/net/tcp address "0100007F:1F90": the IP as
// 32-bit words in host (little-endian) order, the port big-endian hex.
func parseProcAddr(s string) (netip.AddrPort, bool) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	b, err := hex.DecodeString(host)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	ip, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(ip.Unmap(), uint16(p)), true
}
