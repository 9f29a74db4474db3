package host

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// FastOpen are the kernel's TCP Fast Open counters (TcpExt of
// /proc/net/netstat) of the bench process's network namespace. They tell
// whether a claim's data really rode in the SYN: Active counts outgoing
// connections whose SYN data the server accepted, ActiveFail those whose
// SYN data it did not take (the connection fell back to a handshake),
// Passive incoming connections accepted with data in the SYN (servers in
// this namespace only: local child processes, not containers).
type FastOpen struct {
	Active, ActiveFail, Passive int64
}

// ReadFastOpen reads the TCP Fast Open counters of this network namespace.
func ReadFastOpen() (FastOpen, error) {
	f, err := os.Open("/proc/net/netstat")
	if err != nil {
		return FastOpen{}, err
	}
	defer f.Close()
	vals, err := parseTCPExt(bufio.NewScanner(f))
	if err != nil {
		return FastOpen{}, err
	}
	return FastOpen{Active: vals["TCPFastOpenActive"], ActiveFail: vals["TCPFastOpenActiveFail"], Passive: vals["TCPFastOpenPassive"]}, nil
}

// Sub returns the counts since o.
func (f FastOpen) Sub(o FastOpen) FastOpen {
	return FastOpen{Active: f.Active - o.Active, ActiveFail: f.ActiveFail - o.ActiveFail, Passive: f.Passive - o.Passive}
}

// parseTCPExt reads the TcpExt pair of lines (names, then values) of a
// /proc/net/netstat text.
func parseTCPExt(sc *bufio.Scanner) (map[string]int64, error) {
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
		m := map[string]int64{}
		for i, k := range keys[1:] {
			v, err := strconv.ParseInt(vals[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("host: netstat TcpExt %s: %w", k, err)
			}
			m[k] = v
		}
		return m, nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("host: no TcpExt lines in netstat")
}
