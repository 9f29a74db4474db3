package local

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/network"
)

// TestServersOnEmulatedHosts starts a two-member spec with every server on
// a host of its own: each runs in another network namespace at its host's
// address, a connect from the bench pays the round trip asked (SYN and
// SYN-ACK each held half of it; at least the line's Floor, which allows
// for its compensation and early sends), a member reaches the other
// through the line, and Cut loses every packet until Restore.
func TestServersOnEmulatedHosts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("emulated hosts need root")
	}
	ctx := t.Context()
	const rtt = 4 * time.Millisecond
	p, err := network.Parse("rtt=" + rtt.String())
	if err != nil {
		t.Fatal(err)
	}
	n, err := network.New(ctx, network.Options{Prefix: "mlbl-", Profile: p})
	if errors.Is(err, network.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	hosts := func(ctx context.Context, server string) (Host, error) {
		return n.AddHost(ctx, server, network.HostOptions{})
	}
	d, err := StartOn(ctx, []*bench.ServerSpec{echoSpec(t, 2)}, nil, hosts, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	servers := d.Servers("echo")
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		h := n.Host(s.Name())
		if h == nil {
			t.Fatalf("server %s has no host", s.Name())
		}
		ap, err := netip.ParseAddrPort(s.Addr())
		if err != nil || ap.Addr() != h.IP() {
			t.Fatalf("server %s at %s, want its host's address %s", s.Name(), s.Addr(), h.IP())
		}
		ns, err := os.Readlink("/proc/" + strconv.Itoa(s.(*Process).pid()) + "/ns/net")
		if err != nil || ns == self {
			t.Fatalf("server %s in namespace %q (%v), the bench's is %q", s.Name(), ns, err, self)
		}
		start := time.Now()
		c, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < n.Floor(p) {
			t.Errorf("connect to %s took %v, less than the least round trip %v (asked %v)", s.Name(), took, n.Floor(p), rtt)
		}
		c.Close()
	}
	// Member to member, as a cluster's peers talk: through the line too.
	start := time.Now()
	c, err := n.Host(servers[0].Name()).DialContext(ctx, "tcp", servers[1].Addr())
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < n.Floor(p) {
		t.Errorf("member-to-member connect took %v, less than the least round trip %v (asked %v)", took, n.Floor(p), rtt)
	}
	c.Close()

	s := servers[0]
	if err := s.Cut(ctx); err != nil {
		t.Fatal(err)
	}
	if echoes(s.Addr(), 300*time.Millisecond) {
		t.Fatal("a cut server answered")
	}
	if err := s.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if !echoes(s.Addr(), 5*time.Second) {
		t.Fatal("a restored server does not answer")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if !echoes(s.Addr(), 5*time.Second) {
		t.Fatal("a restarted server does not answer on its host's address")
	}
}
