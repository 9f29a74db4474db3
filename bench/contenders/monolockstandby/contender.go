// Package monolockstandby is monolock deployed as the documentation's
// high-availability page describes it: a primary and a passive standby
// server, identical and unconnected (no replication), one address the
// clients know, and a failover mechanism that watches the primary's
// /readyz and moves the address to the standby. The client is monolock's
// (bench/contenders/monolock); the pair and the one address are what this
// row adds. The failover scenario owns the mechanism: a virtual IP of the
// emulated network moved between the servers' hosts, or on loopback its
// own address mover (bench/faults/addrmove) in front of the pair.
package monolockstandby

import (
	"context"
	"net/netip"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/results"
	mono "github.com/monolock/monolock-bench/monolock"
)

// Name is the contender's id in results.
const Name = "monolock-standby"

// Server is the pair: two replicas of monolock's server, the first the
// primary, the second the standby. They share nothing; Replicas only
// makes the backends start two.
var Server = &bench.ServerSpec{
	Name:      Name,
	Replicas:  2,
	GoPackage: monolock.Server.GoPackage,
	Args:      pairArgs,
	Port:      monolock.Server.Port,
	OpsPort:   monolock.Server.OpsPort,
	Ready:     monolock.Server.Ready,
}

// pairArgs are monolock's arguments, but on a host of its own the server
// listens on every address of the host (monolock's default listen
// address), so that it answers at the virtual IP a failover moves to its
// host as at the host's own address. On 127.0.0.1 it keeps its port
// there.
func pairArgs(a bench.ServerArgs) []string {
	if ap, err := netip.ParseAddrPort(a.Listen); err == nil && !ap.Addr().IsLoopback() {
		a.Listen = netip.AddrPortFrom(netip.IPv4Unspecified(), ap.Port()).String()
	}
	return monolock.Server.Args(a)
}

// Contender returns the monolock-standby row of the contender table. It
// takes part in the failover scenario only: everywhere else it is
// monolock's client on one monolock server (the primary), which the
// monolock row measures already.
func Contender() bench.Contender {
	set := monolock.Settings()
	set["deployment"] = "two monolock servers (primary, standby) on their own hosts, identical, no replication, no connection between them; the standby runs empty and waits"
	set["address"] = "the clients dial one address (Open gets one); in the failover scenario, on emulated hosts a virtual IP that the failover watcher moves from the primary's host link to the standby's, on loopback the bench's TCP forwarder to the primary (see the scenario's standby_address)"
	set["listen"] = "on an emulated host every address of the host (monolock's default, so that it answers at the virtual IP its host holds); on loopback its own 127.0.0.1 port"
	set["scenarios"] = "failover only: elsewhere this is the monolock row's client on one server"
	return bench.Contender{
		Name: Name, Label: "monolock + standby", Family: "monolock", Colour: "#6a8fd8",
		Server:    Server,
		Standby:   true,
		Scenarios: []string{"failover"},
		Settings:  set,
		New: func(_ context.Context, addrs []string, lease time.Duration, o bench.OpenOptions) (bench.Locker, error) {
			return monolock.New(mono.Config{Address: addrs[0], Dialer: o.Dialer}, lease), nil
		},
		Dials:  true,
		Claims: results.OfKind(results.ClaimPromise, Claims()),
		Notes:  Notes(),
	}
}

// Notes are what the pattern costs that a run does not measure.
func Notes() []string {
	return []string{
		"A standby is a fast restart on other hardware: a failover loses the queues and the ownership, as a restart does, and keeps the guarantees only while the failover fences the old primary (takes its address or stops it) and the standby's clock is not behind the primary's (NTP): the token of a grant is built from the unix second of the latest grant.",
		"The failover mechanism here is the bench's: after the primary failed /readyz `fall` times in a row at `interval` (keepalived's vrrp_script), it moves the one address — on emulated hosts a virtual IP from the primary's host link to the standby's, on loopback a TCP forwarder that cuts every established connection off the old primary and resets it at the client's next segment, as a virtual IP taken over does. keepalived's VRRP advertisements and gratuitous ARP add their own time to D.",
	}
}
