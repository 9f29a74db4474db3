package local

import (
	"context"
	"net/netip"
	"os/exec"
	"sync"

	"github.com/monolock/monolock-bench/bench"
)

// Host is an emulated host a server runs on, in a network namespace of its
// own at an address of its own (bench/network's Host is one).
type Host interface {
	IP() netip.Addr
	// Command runs a program inside the host's namespace, as
	// exec.CommandContext.
	Command(ctx context.Context, name string, args ...string) *exec.Cmd
	// Sysctl sets a namespaced kernel setting of the host.
	Sysctl(key, value string) error
}

// cutter is a host that can lose every packet to and from itself
// (bench/network's Host): a server on one can be cut off the network.
type cutter interface{ Cut(cut bool) error }

// virtualIPHost is a host that can hold a virtual IP of its network
// (bench/network's Host): a server on one can be reached at an address
// a failover moves.
type virtualIPHost interface {
	VirtualIP() (bench.VirtualIP, error)
}

// Hosts gives the host the server of this name runs on, made at its first
// call. Nil keeps every server on 127.0.0.1 in the bench's own namespace.
type Hosts func(ctx context.Context, server string) (Host, error)

// Ports of a server on a host of its own, where every port is free: the
// spec's container ports, else these.
const (
	hostPort     = 7000
	hostOpsPort  = 7001
	hostPeerPort = 7002
)

// placement remembers each server's host, so that a start tried again (on
// 127.0.0.1, new ports) or a restart keeps it.
type placement struct {
	hosts Hosts
	mu    sync.Mutex
	by    map[string]Host
}

func (pl *placement) host(ctx context.Context, server string) (Host, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if h, ok := pl.by[server]; ok {
		return h, nil
	}
	h, err := pl.hosts(ctx, server)
	if err != nil {
		return nil, err
	}
	pl.by[server] = h
	return h, nil
}

// hostAddr is the host's address at port, or at def when port is 0.
func hostAddr(h Host, port, def int) string {
	if port == 0 {
		port = def
	}
	return netip.AddrPortFrom(h.IP(), uint16(port)).String()
}
