package network

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Stats are the line's counters since it started; Sub gives those of a
// window between two reads.
type Stats struct {
	// Elapsed is the time the counters cover.
	Elapsed time.Duration
	// CPU is the CPU time the line process used (all its threads): bench
	// CPU that would not exist on a real network. It includes the
	// kernel's receive processing of every packet the line delivers,
	// which on the direct path the sending process pays.
	CPU time.Duration
	// Packets and Bytes are what the line delivered.
	Packets, Bytes uint64
	Dropped        Drops
	// Queued is the number of packets held now, MaxQueued the most held
	// at once: since the start, or in the window of Sub (there within
	// 1/16 of itself).
	Queued, MaxQueued int
	// LateP50, LateP99 and LateMax describe how much after its due time
	// each packet left the line: the queueing and wake-up delay the line
	// adds on top of the asked hold (within 1/16). Early counts packets
	// sent ahead of their due time, by at most Lead.
	LateP50, LateP99, LateMax time.Duration
	Early                     uint64
	// Lead is how far ahead of a due time the line wakes (its measured
	// median wake-up latency), now.
	Lead time.Duration
	// Wakeups is how often the line's loop woke, TimerWakes how often at
	// a due time (rather than for a packet or a command).
	Wakeups, TimerWakes uint64
	// KernelDrops are packets the kernel dropped in front of a link
	// because the line did not read them in time (tx_dropped of every
	// device of the network, at the time of the read).
	KernelDrops uint64
	Hosts       []HostStats

	late, held histogram
}

// HostStats are one host's packets; the host "calibration" is the
// network's own, which New measures the line's cost through.
type HostStats struct {
	Name string
	// In and Out count packets delivered to and from the host; Dropped
	// those to or from it that were dropped.
	In, Out, InBytes, OutBytes, Dropped uint64
}

// PacketsPerSecond returns the rate of delivered packets.
func (s Stats) PacketsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Packets) / s.Elapsed.Seconds()
}

// CPUCores returns the line's CPU time per wall time (1 is one core).
func (s Stats) CPUCores() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return s.CPU.Seconds() / s.Elapsed.Seconds()
}

// Sub returns the counters of the window from earlier to s.
func (s Stats) Sub(earlier Stats) Stats {
	d := s
	d.Elapsed -= earlier.Elapsed
	d.CPU -= earlier.CPU
	d.Packets -= earlier.Packets
	d.Bytes -= earlier.Bytes
	d.Dropped = s.Dropped.sub(earlier.Dropped)
	d.Early -= earlier.Early
	d.Wakeups -= earlier.Wakeups
	d.TimerWakes -= earlier.TimerWakes
	d.KernelDrops -= earlier.KernelDrops
	d.late = s.late.sub(&earlier.late)
	d.LateP50, d.LateP99, d.LateMax = d.late.quantile(0.5), d.late.quantile(0.99), d.late.maxValue()
	d.held = s.held.sub(&earlier.held)
	d.MaxQueued = int(d.held.maxValue())
	prev := map[string]HostStats{}
	for _, h := range earlier.Hosts {
		prev[h.Name] = h
	}
	d.Hosts = nil
	for _, h := range s.Hosts {
		e := prev[h.Name]
		d.Hosts = append(d.Hosts, HostStats{h.Name, h.In - e.In, h.Out - e.Out, h.InBytes - e.InBytes, h.OutBytes - e.OutBytes, h.Dropped - e.Dropped})
	}
	return d
}

func (s Stats) String() string {
	return fmt.Sprintf("%.0f packets/s, %d dropped (loss %d, fault %d, queue %d, kernel %d), late p50 %v p99 %v max %v, max held %d, line CPU %.2f cores",
		s.PacketsPerSecond(), s.Dropped.Total(), s.Dropped.Loss, s.Dropped.Fault, s.Dropped.Queue, s.KernelDrops,
		s.LateP50, s.LateP99, s.LateMax, s.MaxQueued, s.CPUCores())
}

// Stats reads the line's counters.
func (n *Network) Stats() (Stats, error) {
	if n.isClosed() {
		return Stats{}, ErrClosed
	}
	r, err := n.line.call(request{Op: "stats"}, -1)
	if err != nil {
		return Stats{}, err
	}
	ls := r.Stats
	s := Stats{
		Elapsed: time.Duration(ls.Elapsed), Packets: ls.Packets, Bytes: ls.Bytes, Dropped: ls.Drops,
		Queued: ls.Queued, MaxQueued: ls.MaxQueued, Early: ls.Early, Lead: time.Duration(ls.Lead),
		Wakeups: ls.Wakeups, TimerWakes: ls.TimerWakes, late: ls.Late, held: ls.Held,
	}
	s.LateP50, s.LateP99, s.LateMax = s.late.quantile(0.5), s.late.quantile(0.99), s.late.maxValue()
	s.CPU = processCPU(n.line.pid)
	s.KernelDrops = linkTxDropped(benchLinkName(n.prefix, n.run))
	n.mu.Lock()
	hosts := n.hosts
	n.mu.Unlock()
	for i, h := range hosts {
		c, ok := ls.Hosts[i]
		if h == nil || !ok {
			continue
		}
		s.KernelDrops += h.txDropped()
		s.Hosts = append(s.Hosts, HostStats{h.name, c.In, c.Out, c.InBytes, c.OutBytes, c.Dropped})
	}
	return s, nil
}

// processCPU sums the run time of every thread of pid from schedstat
// (nanoseconds), or 0 when it cannot be read.
func processCPU(pid int) time.Duration {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		sum += time.Duration(ns)
	}
	return sum
}

// linkTxDropped reads tx_dropped of a device of the bench's namespace.
func linkTxDropped(name string) uint64 {
	b, err := os.ReadFile("/sys/class/net/" + name + "/statistics/tx_dropped")
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v
}
