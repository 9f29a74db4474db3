// Package monolockstandby is monolock deployed as the documentation's
// high-availability page describes it: a primary and a passive standby
// server, identical and unconnected (no replication), one address the
// clients know, and a failover mechanism that watches the primary's
// /readyz and moves the address to the standby. The client is monolock's
// (bench/contenders/monolock); the pair and the one address are what this
// row adds. The failover scenario owns the mechanism: it puts its own
// address mover (bench/faults/addrmove) in front of the pair and moves it.
package monolockstandby

import (
	"context"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/output/results"
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
	Args:      monolock.Server.Args,
	Port:      monolock.Server.Port,
	OpsPort:   monolock.Server.OpsPort,
	Ready:     monolock.Server.Ready,
}

// Contender returns the monolock-standby row of the contender table. It
// takes part in the failover scenario only: everywhere else it is
// monolock's client on one monolock server (the primary), which the
// monolock row measures already.
func Contender() bench.Contender {
	set := monolock.Settings()
	set["deployment"] = "two monolock servers (primary, standby) on their own hosts, identical, no replication, no connection between them; the standby runs empty and waits"
	set["address"] = "the clients dial one address (Open gets one); in the failover scenario it is the bench's address mover, which forwards to the primary until the failover watcher moves it"
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
		"The failover mechanism here is the bench's: a TCP forwarder at the one address, moved after the primary failed /readyz `fall` times in a row at `interval` (keepalived's vrrp_script), resetting every established connection as a virtual IP taken away does. It is not a kernel address move; keepalived's VRRP advertisements and gratuitous ARP add their own time to D.",
	}
}
