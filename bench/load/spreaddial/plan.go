package spreaddial

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/monolock/monolock-bench/bench/host"
)

// Headroom is the share of a port range a Plan counts on: the rest is left
// to connections other than the sessions (other processes, TIME_WAIT of
// earlier runs, the pool of a client).
const Headroom = 0.9

// PortRange is the host's ephemeral port range,
// net.ipv4.ip_local_port_range, both ends included.
type PortRange struct {
	Low  int `json:"low"`
	High int `json:"high"`
}

// ReadPortRange reads the host's net.ipv4.ip_local_port_range.
func ReadPortRange() (PortRange, error) {
	s, err := host.Sysctl("net.ipv4.ip_local_port_range")
	if err != nil {
		return PortRange{}, fmt.Errorf("spreaddial: %w", err)
	}
	return parsePortRange(s)
}

func parsePortRange(s string) (PortRange, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return PortRange{}, fmt.Errorf("spreaddial: ip_local_port_range %q: want two numbers", s)
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return PortRange{}, fmt.Errorf("spreaddial: ip_local_port_range %q: not a port range", s)
	}
	return PortRange{Low: lo, High: hi}, nil
}

// Size is the number of ports in the range.
func (r PortRange) Size() int { return r.High - r.Low + 1 }

// Usable is the number of connections a Plan counts on per (source,
// destination) pair: Headroom of Size.
func (r PortRange) Usable() int { return int(float64(r.Size()) * Headroom) }

// PairsNeeded returns how many (source, destination) pairs sessions
// connections to one server port need in range r (at least 1).
func PairsNeeded(sessions int, r PortRange) int {
	u := r.Usable()
	if u < 1 {
		return sessions
	}
	return max(1, (sessions+u-1)/u)
}

// Plan records, for results.json, whether sessions connections from this
// host to one server port fit in the ephemeral ports of a Dialer, and if
// not what to change.
type Plan struct {
	Sessions     int       `json:"sessions"`
	PortRange    PortRange `json:"ip_local_port_range"`
	Sources      int       `json:"source_addresses"`
	Destinations int       `json:"destination_addresses"`
	// Capacity is Usable ports × pairs.
	Capacity int  `json:"capacity"`
	Fits     bool `json:"fits"`
	// Needed says what to change when the sessions do not fit; empty when
	// they do.
	Needed string `json:"needed,omitempty"`
}

// NewPlan checks sessions connections against d (nil: a plain dialer, one
// pair) and range r.
func NewPlan(sessions int, r PortRange, d *Dialer) Plan {
	p := Plan{Sessions: sessions, PortRange: r, Sources: 1, Destinations: 1}
	if d != nil {
		p.Sources, p.Destinations = max(len(d.Sources), 1), max(len(d.Destinations), 1)
	}
	pairs := p.Sources * p.Destinations
	p.Capacity = r.Usable() * pairs
	p.Fits = sessions <= p.Capacity
	if !p.Fits {
		p.Needed = fmt.Sprintf("%d connections to one server port need %d (source × destination) address pairs at net.ipv4.ip_local_port_range %d–%d (%d usable ports each), have %d: add source addresses (Dialer.Sources, 127.0.0.x on loopback) or server addresses (Dialer.Destinations), or widen net.ipv4.ip_local_port_range (a host sysctl the bench does not change)",
			sessions, PairsNeeded(sessions, r), r.Low, r.High, r.Usable(), pairs)
	}
	return p
}
