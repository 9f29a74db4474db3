// Package network emulates a multi-host network on one machine, so that
// every figure of the bench can be measured at a real round-trip time:
// each server sits on an emulated host of its own, and every packet to or
// from it — SYN, SYN-ACK, FIN and data alike — is delayed, jittered or
// dropped per a Profile on its way.
//
// # How packets flow
//
// A Network owns one /24 of 198.18.0.0/15 (the range RFC 2544 sets aside
// for benchmarks). The bench stays in its own network namespace and gets
// a TUN device there, <prefix><run> with address .1 and the /24 routed
// through it, so its clients dial hosts at their addresses without any
// change. Each host is a network namespace — a new one named
// <prefix><run>-<host> under /run/netns (AddHost), or a Docker
// container's started with --network none (AttachNamespace) — holding one
// TUN device, <prefix>link, with the host's address in the same /24.
//
// All TUN descriptors are held by the delay line, a child process of the
// bench (the bench's own executable, see ChildMain), which acts as one
// switch: it reads each packet as it leaves a namespace, takes the
// destination host from the address, holds the packet until its due time
// and writes it into the destination namespace unchanged. It runs on one
// thread under SCHED_FIFO, so that a busy machine does not keep packets
// waiting for a CPU. Writing a packet into a namespace runs the receiving
// socket's TCP processing on that thread (on the direct path the sender
// pays it), about 8 µs a packet on a small VM: one line carries about
// 100k packets/s, and bursts beyond that queue in front of it. Host-to-host
// traffic (cluster members) crosses the same switch. No kernel
// forwarding, NAT, iptables rule or route outside the network's own
// devices is involved. The line runs apart from the bench so that the
// bench's Go scheduler and garbage collector cannot stall the wire, and
// so that its CPU time is counted apart (Stats.CPU).
//
// # Delays
//
// A path between the bench and a host takes the host's profile; a path
// between two hosts the profile of the one with the larger RTT. Each
// packet is held RTT/2 less half the RTT's Compensation, plus its
// jitter; a packet never overtakes an earlier one on its path. The
// Compensation is measured on an RTT's first use (New does it for the
// profiles it is given): TCP round trips through a link holding RTT/2
// each way take more than RTT, by the line's work and by the wake-ups of
// the line and of both ends, which had slept while the packet waited;
// the line subtracts that excess, so that a round trip between idle ends
// takes the asked RTT at the median. The line sleeps in epoll_pwait2
// (nanosecond timeouts, Linux 5.11 or later) and wakes ahead of a due
// time by its measured median wake-up latency (Stats.Lead), so that
// packets leave on time at the median; none leaves more than 200 µs
// early. A round trip never takes less than Network.Floor. The smallest
// RTT it can emulate is Calibration.OwnRTT, what a link that holds
// nothing adds against the direct path; below it, use Loopback, which
// builds no network at all.
//
// A link with a rate serialises its packets at that bandwidth per
// direction and drops what would wait more than 50 ms in its queue.
//
// # Use from a backend
//
//	p, err := network.Parse(flagValue)            // loopback: build nothing
//	n, err := network.New(ctx, network.Options{Profile: p, Hosts: overrides})
//	defer n.Close()
//	h, err := n.AddHost(ctx, "redis", network.HostOptions{})
//	cmd := h.Command(ctx, "redis-server", "--bind", h.IP().String(), "--port", "6379")
//	// … or, for a container started with --network none:
//	h, err = n.AttachNamespace(ctx, "redis", containerPid, network.HostOptions{})
//	// … or, for cluster members that must know each other's addresses
//	// before their containers start:
//	h, err = n.ReserveHost(ctx, "etcd-1", network.HostOptions{}) // h.IP() is known now
//	err = h.Attach(ctx, containerPid)                            // once it runs
//	m, err := n.Measure(ctx, h, network.MeasureOptions{Addr: h.Addr(6379)})
//	h.SetFault(network.DropAll)                    // host loss; NoFault heals
//
// Clients in the bench dial h.Addr(port) as they dial 127.0.0.1 today.
// Connections from the bench come from n.BenchIP() by default; clients
// that open many short connections spread them over n.BenchSources(),
// since off loopback the kernel does not reuse ports in TIME_WAIT.
// The bench's executable must call ChildMain first in main.
//
// # Faults
//
// Host.SetFault (or Drop, Cut) drops everything to and/or from a host
// (host loss, SYNs included; one-sided partitions), Network.Partition one
// direction between two hosts; both act at once, packets already held
// included. A client process on a host of its own (Host.Command) loses its
// host the same way: the bench's handover scenario runs its host-loss
// holder so.
//
// # Virtual IPs
//
// Network.AddVirtualIP takes a free address of the subnet for one host to
// carry as a second address of its link; the line delivers its packets
// to the holder, and VirtualIP.Move gives it to another host, as
// keepalived moves its address: a takeover (every packet to it reaches
// the new holder, whose kernel resets the old connections at their next
// segment) or, with keep, a switch that leaves the connections open
// before the move on the old host (vip.go).
//
// # Cleanup
//
// Every object carries the prefix (default "mlb-"): namespaces, devices,
// and the run's lock file under /run/<prefix>network. The TUN devices are
// not persistent, so they vanish with the line however it ends; the
// bench and its line hold the run's lock, so a run slot whose lock can be
// taken is stale, and Sweep (called by New) removes what it left. Close
// removes everything; so does cancelling New's context.
//
// Networks of any prefix, in any process, share 198.18.0.0/15: a new one
// takes the first /24 that no route covers, under one lock for the whole
// range (/run/monolock-bench-network.lock) held until its own route
// exists, so that two networks built at once never take the same /24.
//
// Building a network needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and
// /dev/net/tun; New says which is missing (ErrUnavailable).
package network
