package results

import (
	"slices"
	"strings"
)

// NetworkRun is one network profile a run measured under: what was asked,
// what its paths measured, and what the emulation itself cost.
type NetworkRun struct {
	// Profile is the profile's text ("loopback", "az", "rtt=2ms,loss=0.1%").
	Profile string `json:"profile"`
	// Backend and NetworkPath are the profile's servers' backend and how
	// the bench reached them (as Environment's, which records the first
	// profile's): a later profile may run on another backend.
	Backend     string `json:"backend,omitempty"`
	NetworkPath string `json:"network_path,omitempty"`
	// AskedRTTUS is the round trip asked between the bench and a host,
	// JitterUS its spread (± per round trip), Loss the share of packets
	// lost per direction; 0 for loopback.
	AskedRTTUS float64 `json:"asked_rtt_us"`
	JitterUS   float64 `json:"jitter_us,omitempty"`
	Loss       float64 `json:"loss,omitempty"`
	// LineOwnRTTUS is the round trip the delay line adds by itself
	// (through a link that holds nothing, against 127.0.0.1), subtracted
	// from every asked RTT; DirectRTTUS the direct path's round trip.
	LineOwnRTTUS float64 `json:"line_own_rtt_us,omitempty"`
	DirectRTTUS  float64 `json:"direct_rtt_us,omitempty"`
	// UncompensatedRTT are round trips through a link holding exactly
	// half the asked RTT each way, between idle ends; CompensationUS is
	// what the line then subtracted from the asked RTT (the excess of
	// those round trips, found again at the reduced hold), so that a round
	// trip takes the asked RTT at the median.
	UncompensatedRTT SpreadUS `json:"uncompensated_rtt,omitzero"`
	CompensationUS   float64  `json:"compensation_us,omitempty"`
	// CompensationRounds is the spread of the excess over the rounds the
	// compensation was measured in (their median is CompensationUS).
	CompensationRounds SpreadUS `json:"compensation_rounds,omitzero"`
	// Paths are the measured paths: the bench to each server, and
	// cluster members to each other.
	Paths []NetworkPath `json:"paths,omitempty"`
	// Line is the delay line's own cost over the profile's scenarios.
	Line *LineCost `json:"line,omitempty"`
}

// NetworkPath is one path as measured before the scenarios ran: TCP
// ping-pong round trips on one connection and TCP connects to the
// server's own port.
type NetworkPath struct {
	// Server is the server (host) measured, From the server measured from
	// ("" for the bench's clients).
	Server string `json:"server"`
	From   string `json:"from,omitempty"`
	// Profile is the path's profile, AskedRTTUS its asked round trip.
	Profile    string  `json:"profile"`
	AskedRTTUS float64 `json:"asked_rtt_us"`
	// SubtractedUS is what the line subtracted from the path's asked RTT
	// (its compensation).
	SubtractedUS float64  `json:"subtracted_us,omitempty"`
	RTT          SpreadUS `json:"rtt"`
	Connect      SpreadUS `json:"connect"`
	// Failed counts samples that failed or timed out.
	Failed int `json:"failed,omitempty"`
}

// SpreadUS summarises samples in microseconds.
type SpreadUS struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// LineCost is what the delay line did and cost while a profile's
// scenarios ran: bench CPU that a real network would not spend.
type LineCost struct {
	Seconds       float64 `json:"seconds"`
	Packets       uint64  `json:"packets"`
	PacketsPerSec float64 `json:"packets_per_sec"`
	// CPUSeconds is the line process's CPU time; CPUCores its average
	// share of one core.
	CPUSeconds float64 `json:"cpu_seconds"`
	CPUCores   float64 `json:"cpu_cores"`
	// Dropped counts packets the line dropped (the profile's loss
	// included); KernelDrops those the kernel dropped in front of a link
	// the line did not read in time.
	Dropped     uint64 `json:"dropped"`
	LossDrops   uint64 `json:"loss_drops"`
	KernelDrops uint64 `json:"kernel_drops,omitempty"`
	// LateP50US, LateP99US: how long after its due time a packet left
	// the line (its queueing and wake-up delay), MaxQueued the most
	// packets it held at once.
	LateP50US float64 `json:"late_p50_us"`
	LateP99US float64 `json:"late_p99_us"`
	MaxQueued int     `json:"max_queued"`
}

// NetworkSuffix joins a variant and the network profile it ran under, as
// the runner names variants under a profile other than loopback
// ("w1@az"); such a record also carries the profile in Raw.Network.
const NetworkSuffix = "@"

// Label is the profile as records name it (Raw.Network): "" for
// loopback, else Profile.
func (n NetworkRun) Label() string {
	if n.Profile == "loopback" {
		return ""
	}
	return n.Profile
}

// MeasuredRTTUS is the profile's round trip as its paths measured it,
// µs: the median over the bench's paths of their RTT p50, or, where no
// round trip was measured (loopback), of their connect p50 (one round
// trip and an accept); 0 when nothing was measured.
func (n NetworkRun) MeasuredRTTUS() float64 {
	var v []float64
	for _, p := range n.Paths {
		switch {
		case p.From != "":
		case p.RTT.N > 0:
			v = append(v, p.RTT.P50)
		case p.Connect.N > 0:
			v = append(v, p.Connect.P50)
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// UnderNetwork returns a copy of r with only the records, figures and
// network record of the profile labelled label (Raw.Network; "" is
// loopback), their variants without the network suffix: the run as if it
// had run under that profile alone. Everything else is shared with r.
func (r *Results) UnderNetwork(label string) *Results {
	base := func(variant string) string {
		if label == "" {
			return variant
		}
		return strings.TrimSuffix(variant, NetworkSuffix+label)
	}
	out := *r
	out.Raw, out.Summary, out.Networks = nil, nil, nil
	for _, n := range r.Networks {
		if n.Label() == label {
			out.Networks = append(out.Networks, n)
		}
	}
	for _, x := range r.Raw {
		if x.Network == label {
			x.Variant = base(x.Variant)
			out.Raw = append(out.Raw, x)
		}
	}
	for _, x := range r.Summary {
		if x.Network == label {
			x.Variant = base(x.Variant)
			out.Summary = append(out.Summary, x)
		}
	}
	return &out
}

// FirstNetwork is the run under its first network profile (all of it
// when it ran under one): what the sections written for one path read.
func (r *Results) FirstNetwork() *Results {
	if len(r.Networks) == 0 {
		return r
	}
	return r.UnderNetwork(r.Networks[0].Label())
}
