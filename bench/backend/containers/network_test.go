package containers

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
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
// SYN-ACKs. After both close, a sweep of the prefix finds nothing left.
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
	d, err := StartOn(ctx, []*bench.ServerSpec{floors.TCPServer}, func(ctx context.Context, server string, pid int) (Host, error) {
		return n.AttachNamespace(ctx, server, pid, network.HostOptions{})
	})
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
	var low, high time.Duration = time.Hour, 0
	for range samples {
		start := time.Now()
		c, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		c.Close()
		low, high = min(low, took), max(high, took)
	}
	after, err := n.Stats()
	if err != nil {
		t.Fatal(err)
	}
	p := network.AZ
	floor := p.RTT - p.Jitter - n.Calibration().OwnRTT - 2*200*time.Microsecond
	if low < floor {
		t.Errorf("fastest connect %v below %v (asked %v ± %v, line's own %v)", low, floor, p.RTT, p.Jitter, n.Calibration().OwnRTT)
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
