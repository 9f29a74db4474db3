package network

import "fmt"

// What the line applies to each link (its parameters and faults) and what
// it counts.

// linkParams is what the line applies to a host's link, computed by the
// bench from the host's profile and the line's own measured cost.
type linkParams struct {
	// RTT is the asked round trip (ns); between two hosts the path takes
	// the parameters of the one with the larger RTT.
	RTT int64 `json:"rtt"`
	// Hold is each packet's one-way hold before jitter (ns): RTT/2 less
	// half the line's own round-trip cost.
	Hold int64 `json:"hold"`
	// Jitter is the width of the uniform spread around Hold (ns).
	Jitter int64   `json:"jitter"`
	Loss   float64 `json:"loss"`
	// Rate is the link's bandwidth per direction (bit/s), 0 unlimited.
	Rate int64 `json:"rate"`
}

// Fault is what a host's link drops on purpose; faults apply to packets
// still held in the line as well as to new ones.
type Fault uint8

const (
	// NoFault delivers packets per the profile.
	NoFault Fault = 0
	// DropIn drops every packet to the host: it hears nothing.
	DropIn Fault = 1
	// DropOut drops every packet from the host: nothing it sends arrives.
	DropOut Fault = 2
	// DropAll drops both ways, SYNs included: host loss.
	DropAll = DropIn | DropOut
)

func (f Fault) String() string {
	switch f {
	case NoFault:
		return "none"
	case DropIn:
		return "drop-in"
	case DropOut:
		return "drop-out"
	case DropAll:
		return "drop-all"
	}
	return fmt.Sprintf("Fault(%d)", uint8(f))
}

// hostCounters are one host's packets delivered to and from it, and the
// packets to or from it that were dropped.
type hostCounters struct {
	In       uint64 `json:"in"`
	Out      uint64 `json:"out"`
	InBytes  uint64 `json:"in_bytes"`
	OutBytes uint64 `json:"out_bytes"`
	Dropped  uint64 `json:"dropped"`
}

// Drops counts the packets the line did not deliver, by reason.
type Drops struct {
	// Loss: the profile's random loss.
	Loss uint64 `json:"loss"`
	// Fault: a host or path fault.
	Fault uint64 `json:"fault"`
	// Queue: the line held QueueLimit packets already, or the queue of
	// a link with a rate was full (50 ms of its bandwidth).
	Queue uint64 `json:"queue"`
	// Unroutable: to an address of no host (or not IPv4).
	Unroutable uint64 `json:"unroutable"`
	// WriteErr: the destination device refused it.
	WriteErr uint64 `json:"write_err"`
}

func (d Drops) sub(e Drops) Drops {
	return Drops{d.Loss - e.Loss, d.Fault - e.Fault, d.Queue - e.Queue, d.Unroutable - e.Unroutable, d.WriteErr - e.WriteErr}
}

// Total returns the sum over reasons.
func (d Drops) Total() uint64 { return d.Loss + d.Fault + d.Queue + d.Unroutable + d.WriteErr }

// lineStats is the line's report, sent to the bench as JSON.
type lineStats struct {
	Elapsed    int64                `json:"elapsed"`
	Packets    uint64               `json:"packets"`
	Bytes      uint64               `json:"bytes"`
	Drops      Drops                `json:"drops"`
	Queued     int                  `json:"queued"`
	MaxQueued  int                  `json:"max_queued"`
	Held       histogram            `json:"held"` // packets held, counted at each packet queued
	Late       histogram            `json:"late"`
	Early      uint64               `json:"early"`
	Lead       int64                `json:"lead"`
	Wakeups    uint64               `json:"wakeups"`
	TimerWakes uint64               `json:"timer_wakes"`
	Hosts      map[int]hostCounters `json:"hosts"`
}
