package network

import (
	"context"
	"errors"
	"fmt"
)

// hostKind says what addHost makes.
type hostKind int

const (
	namespaceHost   hostKind = iota // a new namespace of its own, linked
	reservedHost                    // no namespace or link until Attach
	calibrationHost                 // a namespaceHost of the network's own
)

// AddHost creates a host: a new network namespace named
// <prefix><run>-<name> (under /run/netns, so `ip netns exec` reaches it)
// with one link to the line and the next free address. Start its
// processes with Host.Command.
func (n *Network) AddHost(ctx context.Context, name string, o HostOptions) (*Host, error) {
	p, err := n.profileFor(name, o)
	if err != nil {
		return nil, err
	}
	return n.addHost(ctx, name, p, namespaceHost)
}

// AttachNamespace makes a host of the network namespace of process pid,
// such as a Docker container started with --network none
// (its State.Pid): the container gets one link to the line and the next
// free address, and is reached there.
func (n *Network) AttachNamespace(ctx context.Context, name string, pid int, o HostOptions) (*Host, error) {
	h, err := n.ReserveHost(ctx, name, o)
	if err != nil {
		return nil, err
	}
	if err := h.Attach(ctx, pid); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// ReserveHost makes a host without a namespace yet: its name, address
// and profile, for a server that must be told its own and its peers'
// addresses before its container, and so its namespace, exists (cluster
// members). Host.Attach gives it the container's namespace; until then
// nothing reaches its address.
func (n *Network) ReserveHost(ctx context.Context, name string, o HostOptions) (*Host, error) {
	p, err := n.profileFor(name, o)
	if err != nil {
		return nil, err
	}
	return n.addHost(ctx, name, p, reservedHost)
}

func (n *Network) profileFor(name string, o HostOptions) (Profile, error) {
	if err := checkHostName(name); err != nil {
		return Profile{}, fmt.Errorf("network: %w", err)
	}
	p := n.opts.Profile
	if hp, ok := n.opts.Hosts[name]; ok {
		p = hp
	}
	if o.Profile != nil {
		p = *o.Profile
	}
	if p.IsLoopback() {
		return Profile{}, fmt.Errorf("network: host %s: a host on an emulated network cannot be loopback", name)
	}
	return p, nil
}

func (n *Network) addHost(ctx context.Context, name string, p Profile, kind hostKind) (*Host, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	params, err := n.params(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("network: host %s: %w", name, err)
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, ErrClosed
	}
	if _, dup := n.byName[name]; dup {
		n.mu.Unlock()
		return nil, fmt.Errorf("network: host %s exists already", name)
	}
	index := 0
	for i := 1; i <= maxHosts; i++ {
		if n.hosts[i] == nil {
			index = i
			break
		}
	}
	if index == 0 {
		n.mu.Unlock()
		return nil, fmt.Errorf("network: no room for host %s: %d hosts at most", name, maxHosts-1)
	}
	h := &Host{net: n, name: name, index: index, ip: runAddr(n.run, index+1), profile: p, nsFD: -1, internal: kind == calibrationHost}
	n.hosts[index] = h // taken; given back on failure
	n.byName[name] = h
	n.mu.Unlock()
	if kind == reservedHost {
		return h, nil
	}
	if err := h.setUp(params); err != nil {
		h.tearDown()
		n.forget(h)
		return nil, err
	}
	return h, nil
}

func (n *Network) forget(h *Host) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hosts[h.index] == h {
		n.hosts[h.index] = nil
		delete(n.byName, h.name)
	}
}

// Host returns the host named name, or nil.
func (n *Network) Host(name string) *Host {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h := n.byName[name]; h != nil && !h.internal {
		return h
	}
	return nil
}

// Hosts returns the hosts in the order of their addresses.
func (n *Network) Hosts() []*Host {
	n.mu.Lock()
	defer n.mu.Unlock()
	var hs []*Host
	for _, h := range n.hosts {
		if h != nil && !h.internal {
			hs = append(hs, h)
		}
	}
	return hs
}

// Partition drops (cut true) or delivers again (cut false) the packets
// from one host to another, in that direction only; nil stands for the
// bench. Packets held in the line when the cut begins are dropped too.
func (n *Network) Partition(from, to *Host, cut bool) error {
	i, j := 0, 0
	if from != nil {
		i = from.index
	}
	if to != nil {
		j = to.index
	}
	if i == j {
		return errors.New("network: a partition needs two different hosts")
	}
	if n.isClosed() {
		return ErrClosed
	}
	_, err := n.line.call(request{Op: "path", Index: i, To: j, Blocked: cut}, -1)
	return err
}
