package containers

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/bench/contenders/floors"
	"github.com/monolock/monolock-bench/bench/network"
)

// The line is a child process of the test binary (network.ChildMain).
func TestMain(m *testing.M) {
	network.ChildMain()
	os.Exit(m.Run())
}

// testPrefix keeps the test's namespaces and devices apart from benches'.
const testPrefix = "mlbct-"

// TestContainerOnEmulatedHost starts the tcp-floor server in a container
// attached to an az line and connects to it as the bench's clients do:
// every connect pays the asked round trip (a lower bound: the asked RTT
// less its jitter, the line's own cost, which the hold leaves out, and
// the line's wake-up lead each way), and the line carried the SYNs and
// SYN-ACKs; after a restart it is reached at the same address through the
// line, a cut one accepts nothing, a restored one accepts again. After
// both close, a sweep of the prefix finds nothing left.
func TestContainerOnEmulatedHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a container")
	}
	ctx := t.Context()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := engine.Ping(pctx)
	cancel()
	if err != nil {
		t.Skipf("no Docker engine answers: %v", err)
	}
	n, err := network.New(ctx, network.Options{Prefix: testPrefix, Profile: network.AZ})
	if errors.Is(err, network.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	d, err := StartOn(ctx, []*bench.ServerSpec{floors.TCPServer}, func(ctx context.Context, server string) (Host, error) {
		return n.ReserveHost(ctx, server, network.HostOptions{})
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv := d.Servers(floors.TCPServer.Name)[0]
	ap, err := netip.ParseAddrPort(srv.Addr())
	if err != nil || !n.Subnet().Contains(ap.Addr()) {
		t.Fatalf("server at %s (%v), want an address of the line's subnet %s", srv.Addr(), err, n.Subnet())
	}
	before, err := n.Stats()
	if err != nil {
		t.Fatal(err)
	}
	const samples = 30
	low, high := connects(t, srv.Addr(), samples)
	after, err := n.Stats()
	if err != nil {
		t.Fatal(err)
	}
	p := network.AZ
	floor := n.Floor(p)
	if low < floor {
		t.Errorf("fastest connect %v below the line's floor %v (asked %v ± %v)", low, floor, p.RTT, p.Jitter)
	}
	var in, out uint64
	for _, h := range after.Sub(before).Hosts {
		if h.Name == srv.Name() {
			in, out = h.In, h.Out
		}
	}
	if in < samples || out < samples {
		t.Errorf("the line carried %d packets to and %d from %s for %d connects, want at least a SYN and a SYN-ACK each", in, out, srv.Name(), samples)
	}
	t.Logf("%s at %s on %s: connect min %v max %v; line own rtt %v; packets in %d out %d", srv.Name(), srv.Addr(), p, low, high, n.Calibration().OwnRTT, in, out)

	// A restarted container has a new namespace: the server keeps its
	// address, still behind the line.
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if low, _ := connects(t, srv.Addr(), 5); low < floor {
		t.Errorf("after restart the fastest connect %v is below %v", low, floor)
	}
	// Cut drops the SYNs on the line; Restore delivers them again.
	if err := srv.Cut(ctx); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", srv.Addr(), 300*time.Millisecond); err == nil {
		c.Close()
		t.Error("a cut server accepted a connection")
	}
	if err := srv.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	connects(t, srv.Addr(), 1)

	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	left, err := network.Sweep(testPrefix)
	if err != nil || len(left) > 0 {
		t.Errorf("after close a sweep removed %v (%v), want nothing left", left, err)
	}
}

// TestMembersTalkThroughTheLine starts two replicas of a server with a
// peer port on az hosts: each is told its peers at their hosts' addresses,
// and a connect from one member's namespace to the other's peer address,
// as a cluster member dials its peer, pays the round trip through the
// line (at least its Floor) and crosses it.
func TestMembersTalkThroughTheLine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts containers")
	}
	ctx := t.Context()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := engine.Ping(pctx)
	cancel()
	if err != nil {
		t.Skipf("no Docker engine answers: %v", err)
	}
	n, err := network.New(ctx, network.Options{Prefix: testPrefix, Profile: network.AZ})
	if errors.Is(err, network.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	spec := *floors.TCPServer
	spec.Replicas, spec.PeerPort = 2, spec.Port
	var mu sync.Mutex
	var told [][]string
	args := spec.Args
	spec.Args = func(a bench.ServerArgs) []string {
		mu.Lock()
		told = append(told, a.Peers)
		mu.Unlock()
		return args(a)
	}
	d, err := StartOn(ctx, []*bench.ServerSpec{&spec}, func(ctx context.Context, server string) (Host, error) {
		return n.ReserveHost(ctx, server, network.HostOptions{})
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	servers := d.Servers(spec.Name)
	a, b := n.Host(servers[0].Name()), n.Host(servers[1].Name())
	peer := netip.AddrPortFrom(b.IP(), uint16(spec.PeerPort)).String()
	for _, peers := range told {
		if len(peers) != 2 || peers[1] != peer {
			t.Fatalf("a member was told its peers at %v, want the second at its host's %s", peers, peer)
		}
	}
	before, err := n.Stats()
	if err != nil {
		t.Fatal(err)
	}
	m, err := n.Measure(ctx, b, network.MeasureOptions{From: a, Addr: peer, Samples: 20})
	if err != nil {
		t.Fatal(err)
	}
	after, err := n.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if floor := n.Floor(network.AZ); m.Connect.Min < floor || m.RTT.Min < floor {
		t.Errorf("%s → %s: connect min %v, rtt min %v below the line's floor %v", a.Name(), peer, m.Connect.Min, m.RTT.Min, floor)
	}
	for _, h := range after.Sub(before).Hosts {
		if (h.Name == a.Name() || h.Name == b.Name()) && (h.In < 20 || h.Out < 20) {
			t.Errorf("host %s: %d packets in, %d out through the line for 20 connects", h.Name, h.In, h.Out)
		}
	}
	t.Logf("%s → %s: connect %v, rtt %v", a.Name(), peer, m.Connect, m.RTT)
}

// connects times k TCP connects to addr and returns the fastest and the
// slowest.
func connects(t *testing.T, addr string, k int) (low, high time.Duration) {
	t.Helper()
	low = time.Hour
	for range k {
		start := time.Now()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		c.Close()
		low, high = min(low, took), max(high, took)
	}
	return low, high
}
