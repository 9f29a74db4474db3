package host

import "fmt"

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

// ReadFastOpen reads the TCP Fast Open counters of this network namespace
// (/proc/self/net/netstat, which /proc/net/netstat links to). A counter
// the kernel does not have reads 0.
func ReadFastOpen() (FastOpen, error) {
	fs, err := proc()
	if err != nil {
		return FastOpen{}, err
	}
	self, err := fs.Self()
	if err != nil {
		return FastOpen{}, fmt.Errorf("host: %w", err)
	}
	st, err := self.Netstat()
	if err != nil {
		return FastOpen{}, fmt.Errorf("host: netstat: %w", err)
	}
	count := func(v *float64) int64 {
		if v == nil {
			return 0
		}
		return int64(*v)
	}
	return FastOpen{
		Active:     count(st.TCPFastOpenActive),
		ActiveFail: count(st.TCPFastOpenActiveFail),
		Passive:    count(st.TCPFastOpenPassive),
	}, nil
}

// Sub returns the counts since o.
func (f FastOpen) Sub(o FastOpen) FastOpen {
	return FastOpen{Active: f.Active - o.Active, ActiveFail: f.ActiveFail - o.ActiveFail, Passive: f.Passive - o.Passive}
}
