package scenarios

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/local"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/network"
)

// TestHandoverHostLossOnTheLine: on an emulated network the host-loss
// holder runs on a host of its own and loses it on the line: its packets
// cross the line from its host (host to host, to the server's), the line
// drops them once the host is lost, and the waiter is granted only once
// the server let the holder's lease run out, at least half a lease after
// the loss (a lower bound: the last heartbeat came at most a quarter
// lease before it).
func TestHandoverHostLossOnTheLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a network and starts a server")
	}
	if os.Geteuid() != 0 {
		t.Skip("emulated hosts need root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, err := network.Parse("rtt=2ms")
	if err != nil {
		t.Fatal(err)
	}
	n, err := network.New(ctx, network.Options{Prefix: "mlbs-", Profile: p})
	if errors.Is(err, network.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	c := monolock.Contender()
	specs, err := bench.Specs([]bench.Contender{c})
	if err != nil {
		t.Fatal(err)
	}
	d, err := local.StartOn(ctx, specs, nil, func(ctx context.Context, server string) (local.Host, error) {
		return n.AddHost(ctx, server, network.HostOptions{})
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	servers := d.Servers(c.Server.Name)
	var clients []*countedHost
	env := &bench.Env{Contender: c, Servers: servers, Addrs: bench.Addrs(servers), Lease: 2 * time.Second, Deployment: d,
		ClientHost: func(ctx context.Context, name string) (bench.ClientHost, error) {
			h, err := n.AddHost(ctx, "client-"+name, network.HostOptions{})
			if err != nil {
				return nil, err
			}
			ch := &countedHost{Host: h, n: n}
			clients = append(clients, ch)
			return ch, nil
		}}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := holder.Command{Path: exe, Env: append(os.Environ(), childEnv+"=1")}
	before, err := n.Stats()
	if err != nil {
		t.Fatal(err)
	}
	const trials = 2
	raw, err := runHandover(ctx, env, cmd, HostLoss, trials)
	if err != nil {
		t.Fatal(err)
	}
	after, err := n.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if len(clients) != 1 {
		t.Fatalf("%d client hosts made, want the holder's", len(clients))
	}
	if len(raw.Errors) > 0 {
		t.Fatalf("trials failed: %v", raw.Errors)
	}
	w := after.Sub(before)
	if out := clients[0].out; out == 0 || w.Dropped.Fault == 0 {
		t.Errorf("the holder's host sent %d packets through the line and the line dropped %d for a fault; want both above zero", out, w.Dropped.Fault)
	}
	var fastest float64
	for _, m := range raw.Metrics {
		if m.Name == "p50" {
			fastest = m.Value
		}
	}
	values := raw.Series[0].Values
	for _, v := range values {
		fastest = min(fastest, v)
	}
	if low := float64(env.Lease/2) / float64(time.Millisecond); len(values) != trials || fastest < low {
		t.Errorf("handovers %v ms, want %d, each at least half the lease (%v ms)", values, trials, low)
	}
	t.Logf("handovers after host loss on the line: %v ms; the line dropped %d packets of the lost host", values, w.Dropped.Fault)
}

// countedHost is a client host that reads the packets it sent through the
// line when it closes.
type countedHost struct {
	*network.Host
	n   *network.Network
	out uint64
}

func (h *countedHost) Close() error {
	if s, err := h.n.Stats(); err == nil {
		for _, hs := range s.Hosts {
			if hs.Name == h.Name() {
				h.out = hs.Out
			}
		}
	}
	return h.Host.Close()
}
