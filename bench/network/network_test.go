package network

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// floorOf is the least a round trip through a path of RTT rtt and jitter
// can take (Network.Floor).
func floorOf(n *Network, rtt, jitter time.Duration) time.Duration {
	return n.Floor(Profile{RTT: rtt, Jitter: jitter})
}

func mustProfile(t *testing.T, s string) *Profile {
	t.Helper()
	p, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return &p
}

// TestAskedVsMeasured measures the named profiles through their links:
// the figures for the report, and physics as lower bounds.
func TestAskedVsMeasured(t *testing.T) {
	n := newTestNetwork(t, Rack)
	c := n.Calibration()
	t.Logf("direct path: rtt %v, connect %v", c.Direct, c.DirectConnect)
	t.Logf("zero line:   rtt %v, connect %v; own RTT %v (the smallest it can emulate)", c.ZeroLine, c.ZeroLineConnect, c.OwnRTT)
	for _, p := range []Profile{Rack, AZ, Region} {
		h := addHost(t, n, p.Name, &p)
		samples := 100
		if p.RTT > 10*time.Millisecond {
			samples = 20
		}
		m, err := n.Measure(t.Context(), h, MeasureOptions{Samples: samples})
		if err != nil {
			t.Fatal(err)
		}
		comp, _ := n.Compensation(p.RTT)
		t.Logf("%-7s asked %-6v rtt %v | connect %v | rtt p50 %+.1f%% | uncompensated %v, subtracted %v", p, p.RTT, m.RTT, m.Connect,
			100*(float64(m.RTT.P50)/float64(p.RTT)-1), comp.Uncompensated, comp.Subtracted)
		low := floorOf(n, p.RTT, p.Jitter)
		if m.RTT.Min < low || m.Connect.Min < low {
			t.Errorf("%s: rtt min %v, connect min %v below the physics bound %v", p, m.RTT.Min, m.Connect.Min, low)
		}
	}
}

func TestConnectTakesTwoOneWayDelays(t *testing.T) {
	n := newTestNetwork(t, *mustProfile(t, "rtt=10ms"))
	h := addHost(t, n, "server", nil)
	m, err := n.Measure(t.Context(), h, MeasureOptions{Samples: 10})
	if err != nil {
		t.Fatal(err)
	}
	// A connect is SYN there and SYN-ACK back: two one-way delays of 5 ms.
	if low := floorOf(n, 10*time.Millisecond, 0); m.Connect.Min < low || m.RTT.Min < low {
		t.Errorf("connect min %v, rtt min %v; both must take at least %v", m.Connect.Min, m.RTT.Min, low)
	}
}

func TestHostToHostTakesTheFarthersProfile(t *testing.T) {
	n := newTestNetwork(t, Profile{})
	far := addHost(t, n, "far", mustProfile(t, "rtt=10ms"))
	near := addHost(t, n, "near", mustProfile(t, "rtt=2ms"))
	before, err := n.Stats()
	if err != nil {
		t.Fatal(err)
	}
	m, err := n.Measure(t.Context(), near, MeasureOptions{From: far, Samples: 10})
	if err != nil {
		t.Fatal(err)
	}
	after, err := n.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// Between two hosts the path takes the farther host's profile.
	if low := floorOf(n, 10*time.Millisecond, 0); m.RTT.Min < low || m.Connect.Min < low {
		t.Errorf("far→near: rtt min %v, connect min %v; want at least %v", m.RTT.Min, m.Connect.Min, low)
	}
	if m.AskedRTT != 10*time.Millisecond {
		t.Errorf("asked RTT %v, want the farther host's 10ms", m.AskedRTT)
	}
	d := after.Sub(before)
	for _, hs := range d.Hosts {
		if (hs.Name == "far" || hs.Name == "near") && (hs.In == 0 || hs.Out == 0) {
			t.Errorf("host %s: %d in, %d out: host-to-host packets must cross the line", hs.Name, hs.In, hs.Out)
		}
	}
	t.Logf("far→near: rtt %v, connect %v", m.RTT, m.Connect)
}

// udpSink counts datagrams arriving at a socket until closed.
type udpSink struct {
	c    net.PacketConn
	got  chan int
	addr string
}

func newUDPSink(t *testing.T, h *Host, ip string) *udpSink {
	t.Helper()
	var c net.PacketConn
	listen := func() error {
		var err error
		c, err = net.ListenPacket("udp", net.JoinHostPort(ip, "0"))
		return err
	}
	var err error
	if h == nil {
		err = listen()
	} else {
		err = h.Do(listen)
	}
	if err != nil {
		t.Fatal(err)
	}
	s := &udpSink{c: c, got: make(chan int, 1), addr: c.LocalAddr().String()}
	go func() {
		buf := make([]byte, 64)
		n := 0
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				s.got <- n
				return
			}
			n++
		}
	}()
	return s
}

// count waits until no datagram came for quiet, then returns the count.
func (s *udpSink) count(quiet time.Duration) int {
	s.c.SetReadDeadline(time.Now().Add(quiet))
	return <-s.got
}

// sendUDP sends count datagrams to addr from h (nil: the bench).
func sendUDP(t *testing.T, h *Host, addr string, count int) {
	t.Helper()
	var c net.Conn
	dial := func() error {
		var err error
		c, err = net.Dial("udp", addr)
		return err
	}
	var err error
	if h == nil {
		err = dial()
	} else {
		err = h.Do(dial)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range count {
		if _, err := fmt.Fprintf(c, "datagram %d", i); err != nil {
			t.Fatal(err)
		}
		if i%20 == 19 {
			time.Sleep(time.Millisecond) // stay well inside the receiver's buffer
		}
	}
}

func TestLossDropsItsShare(t *testing.T) {
	n := newTestNetwork(t, Profile{})
	h := addHost(t, n, "lossy", mustProfile(t, "rtt=0,loss=20%"))
	const sent = 2000
	sink := newUDPSink(t, h, h.IP().String())
	sendUDP(t, nil, sink.addr, sent)
	got := sink.count(300 * time.Millisecond)
	// 20% of 2000 is 400 ± 18 (one σ); the bounds are ten σ wide.
	if share := 1 - float64(got)/sent; share < 0.1 || share > 0.3 {
		t.Errorf("%d of %d datagrams arrived: %.1f%% lost, want about 20%%", got, sent, 100*share)
	}
	s, err := n.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.Dropped.Loss == 0 {
		t.Error("the line counted no loss")
	}
	t.Logf("%d of %d arrived; line: %d lost", got, sent, s.Dropped.Loss)
}

func TestJitterSpreads(t *testing.T) {
	if testing.Short() {
		t.Skip("measures 100 jittered round trips: not under -short (make test runs it)")
	}
	n := newTestNetwork(t, Profile{})
	p := mustProfile(t, "rtt=4ms,jitter=2ms")
	h := addHost(t, n, "jittery", p)
	m, err := n.Measure(t.Context(), h, MeasureOptions{Samples: 100})
	if err != nil {
		t.Fatal(err)
	}
	// Round trips lie within 4 ms ± 2 ms (triangular): a hundred of them
	// spread over far more than a quarter of that.
	if spread := m.RTT.Max - m.RTT.Min; spread < time.Millisecond/2 {
		t.Errorf("rtt spread %v (%v), want at least 0.5ms", spread, m.RTT)
	}
	if low := floorOf(n, p.RTT, p.Jitter); m.RTT.Min < low {
		t.Errorf("rtt min %v below %v", m.RTT.Min, low)
	}
	t.Logf("rtt %v", m.RTT)
}

func TestDropAllIsHostLoss(t *testing.T) {
	n := newTestNetwork(t, Profile{})
	h := addHost(t, n, "victim", nil)
	echo, err := h.echoAddr()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", echo)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := h.SetFault(DropAll); err != nil {
		t.Fatal(err)
	}
	// A new connection cannot even start: its SYNs are dropped.
	if c, err := net.DialTimeout("tcp", echo, 300*time.Millisecond); err == nil {
		c.Close()
		t.Error("connected to a lost host")
	}
	// An open one hears nothing back.
	c.SetDeadline(time.Now().Add(300 * time.Millisecond))
	c.Write([]byte("ping"))
	if _, err := io.ReadFull(c, make([]byte, 4)); err == nil {
		t.Error("a lost host answered")
	}
	if err := h.SetFault(NoFault); err != nil {
		t.Fatal(err)
	}
	m, err := n.Measure(t.Context(), h, MeasureOptions{Samples: 3})
	if err != nil {
		t.Fatalf("after healing: %v", err)
	}
	if s, _ := n.Stats(); s.Dropped.Fault == 0 {
		t.Error("the line counted no fault drops")
	}
	t.Logf("healed: rtt %v", m.RTT)
}

func TestOneSidedFaults(t *testing.T) {
	n := newTestNetwork(t, Profile{})
	a := addHost(t, n, "a", nil)
	b := addHost(t, n, "b", nil)
	const sent = 20
	// delivered sends datagrams from one end to the other (nil: the
	// bench) and counts those that arrive.
	delivered := func(from, to *Host) int {
		ip := n.BenchIP().String()
		if to != nil {
			ip = to.IP().String()
		}
		sink := newUDPSink(t, to, ip)
		sendUDP(t, from, sink.addr, sent)
		return sink.count(200 * time.Millisecond)
	}
	check := func(what string, from, to *Host, want bool) {
		t.Helper()
		got := delivered(from, to)
		if want && got == 0 || !want && got != 0 {
			t.Errorf("%s: %d of %d arrived, want %v", what, got, sent, map[bool]string{true: "them", false: "none"}[want])
		}
	}
	if err := a.SetFault(DropIn); err != nil {
		t.Fatal(err)
	}
	check("drop-in: bench→a", nil, a, false)
	check("drop-in: a→bench", a, nil, true)
	check("drop-in: b→a", b, a, false)
	if err := a.SetFault(DropOut); err != nil {
		t.Fatal(err)
	}
	check("drop-out: bench→a", nil, a, true)
	check("drop-out: a→bench", a, nil, false)
	check("drop-out: a→b", a, b, false)
	if err := a.SetFault(NoFault); err != nil {
		t.Fatal(err)
	}
	if err := n.Partition(a, b, true); err != nil {
		t.Fatal(err)
	}
	check("partition a→b: a→b", a, b, false)
	check("partition a→b: b→a", b, a, true)
	check("partition a→b: bench→a", nil, a, true)
	if err := n.Partition(a, b, false); err != nil {
		t.Fatal(err)
	}
	check("healed: a→b", a, b, true)
	if err := n.Partition(a, a, true); err == nil {
		t.Error("a partition of a host from itself was accepted")
	}
}

func TestCommandRunsInsideTheHost(t *testing.T) {
	n := newTestNetwork(t, Profile{})
	h := addHost(t, n, "shell", nil)
	cmd := h.Command(t.Context(), os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=interfaces")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, hostLinkName(testPrefix)+" ") || !strings.Contains(s, h.IP().String()+"/24") {
		t.Errorf("the child does not see the host's link:\n%s", s)
	}
	if strings.Contains(s, benchLinkName(testPrefix, n.run)+" ") {
		t.Errorf("the child sees the bench's device:\n%s", s)
	}
	bad := h.Command(t.Context(), "no-such-program-mlb")
	if err := bad.Run(); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("a missing program: %v, want exec.ErrNotFound", err)
	}
}

// isolated starts a process in a network namespace of its own with only
// a loopback device, as a container started with --network none.
func isolated(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func hasLink(t *testing.T, pid int, name string) bool {
	t.Helper()
	ns, err := netns.GetFromPid(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, err = h.LinkByName(name)
	return err == nil
}

func TestAttachAndReattach(t *testing.T) {
	n := newTestNetwork(t, *mustProfile(t, "rtt=2ms"))
	first, second := isolated(t), isolated(t)
	h, err := n.AttachNamespace(t.Context(), "container", first.Process.Pid, HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := n.Measure(t.Context(), h, MeasureOptions{Samples: 5})
	if err != nil {
		t.Fatal(err)
	}
	if low := floorOf(n, 2*time.Millisecond, 0); m.RTT.Min < low {
		t.Errorf("rtt min %v below %v", m.RTT.Min, low)
	}
	if err := h.Attach(t.Context(), second.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Measure(t.Context(), h, MeasureOptions{Samples: 5}); err != nil {
		t.Fatalf("after reattaching: %v", err)
	}
	// The old namespace's device vanished with its descriptor.
	deadline := time.Now().Add(5 * time.Second)
	for hasLink(t, first.Process.Pid, hostLinkName(testPrefix)) {
		if time.Now().After(deadline) {
			t.Fatal("the old namespace still has the link")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !hasLink(t, second.Process.Pid, hostLinkName(testPrefix)) {
		t.Error("the new namespace has no link")
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if hasLink(t, second.Process.Pid, hostLinkName(testPrefix)) {
		t.Error("a closed host's device is still there")
	}
}

// objects lists what exists under prefix: named namespaces, devices of
// the bench's namespace and lock files.
func objects(t *testing.T, prefix string) []string {
	t.Helper()
	var found []string
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			found = append(found, netnsDir+"/"+e.Name())
		}
	}
	links, err := retryDump(netlink.LinkList)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Name, prefix) {
			found = append(found, "device "+l.Attrs().Name)
		}
	}
	if locks, err := os.ReadDir(lockDir(prefix)); err == nil {
		found = append(found, lockDir(prefix))
		for _, e := range locks {
			found = append(found, lockDir(prefix)+"/"+e.Name())
		}
	}
	return found
}

// eventually polls cond for up to 10 s.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func TestCloseLeavesNothing(t *testing.T) {
	needNetwork(t)
	const prefix = "mlbc-"
	n, err := New(t.Context(), Options{Prefix: prefix, Profile: Rack})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := n.AddHost(t.Context(), name, HostOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(objects(t, prefix)) < 4 {
		t.Fatalf("a live network shows only %v", objects(t, prefix))
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if left := objects(t, prefix); len(left) > 0 {
		t.Errorf("Close left %v", left)
	}
	if _, err := n.AddHost(t.Context(), "late", HostOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("AddHost after Close: %v, want ErrClosed", err)
	}
}

func TestCancelledContextCloses(t *testing.T) {
	needNetwork(t)
	const prefix = "mlbx-"
	ctx, cancel := context.WithCancel(t.Context())
	n, err := New(ctx, Options{Prefix: prefix, Profile: Rack})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.AddHost(ctx, "a", HostOptions{}); err != nil {
		t.Fatal(err)
	}
	cancel() // as a Ctrl-C does
	if !eventually(func() bool { return len(objects(t, prefix)) == 0 }) {
		t.Errorf("a cancelled network left %v", objects(t, prefix))
	}
}

// TestKilledRunLeavesNothingInTheWay kills (SIGKILL) a process that holds
// a network, then builds a network with the same prefix and host names.
func TestKilledRunLeavesNothingInTheWay(t *testing.T) {
	needNetwork(t)
	const prefix = "mlbk-"
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=network "+prefix)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe() // held open: the helper waits on it
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var run int
	if _, err := fmt.Fscanf(out, "READY %d\n", &run); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %v", err)
	}
	live := objects(t, prefix)
	cmd.Process.Signal(unix.SIGKILL)
	cmd.Wait()
	// The line dies with the bench, and its devices with it; the named
	// namespaces stay behind for the sweep.
	bench := "device " + benchLinkName(prefix, run)
	if !eventually(func() bool { return !strings.Contains(strings.Join(objects(t, prefix), " "), bench) }) {
		t.Fatalf("%s outlived its run", bench)
	}
	// The run's lock goes when its last holder is gone, a moment after the
	// devices; a run starting before that takes another subnet and leaves
	// the stale one to a later sweep.
	if !eventually(func() bool {
		l, err := tryLock(prefix, run)
		if err == nil {
			l.f.Close() // drop the lock, keep the file for the sweep to see
		}
		return err == nil
	}) {
		t.Fatal("the killed run's lock is still held")
	}
	stale := objects(t, prefix)
	t.Logf("live run: %v; after SIGKILL: %v", live, stale)
	if len(stale) == 0 {
		t.Fatal("nothing was left to sweep; the test shows nothing")
	}
	n, err := New(t.Context(), Options{Prefix: prefix, Profile: Rack})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, name := range []string{"a", "b"} {
		if _, err := n.AddHost(t.Context(), name, HostOptions{}); err != nil {
			t.Fatalf("second run: %v", err)
		}
	}
	if n.run != run {
		t.Errorf("the second run took slot %d, not the swept slot %d", n.run, run)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if left := objects(t, prefix); len(left) > 0 {
		t.Errorf("left %v", left)
	}
}

func TestTwoLiveNetworksKeepApart(t *testing.T) {
	a := newTestNetwork(t, Rack)
	b := newTestNetwork(t, Rack)
	if a.Subnet() == b.Subnet() {
		t.Fatalf("both networks took %v", a.Subnet())
	}
	ha := addHost(t, a, "same-name", nil)
	hb := addHost(t, b, "same-name", nil)
	// A sweep leaves live runs alone.
	if removed, err := Sweep(testPrefix); err != nil || len(removed) > 0 {
		t.Fatalf("Sweep removed %v (%v) of live runs", removed, err)
	}
	for _, c := range []struct {
		n *Network
		h *Host
	}{{a, ha}, {b, hb}} {
		if _, err := c.n.Measure(t.Context(), c.h, MeasureOptions{Samples: 3}); err != nil {
			t.Error(err)
		}
	}
}

func TestProfileBelowTheLineIsRefused(t *testing.T) {
	n := newTestNetwork(t, Profile{})
	own := n.Calibration().OwnRTT
	if own < 2*time.Microsecond {
		t.Skipf("the line's own RTT measured %v; nothing to ask below it", own)
	}
	p := Profile{RTT: own / 2}
	if _, err := n.AddHost(t.Context(), "tiny", HostOptions{Profile: &p}); err == nil || !strings.Contains(err.Error(), "smallest RTT") {
		t.Errorf("a profile below the line's own RTT: %v, want an error naming the smallest RTT", err)
	}
	if _, err := n.AddHost(t.Context(), "lo", HostOptions{Profile: &Loopback}); err == nil {
		t.Error("a loopback host was accepted")
	}
	if _, err := New(t.Context(), Options{Profile: Loopback}); err == nil {
		t.Error("a loopback network was built")
	}
	if _, err := n.AddHost(t.Context(), "bad name", HostOptions{}); err == nil {
		t.Error("a host name with a space was accepted")
	}
	addHost(t, n, "twice", nil)
	if _, err := n.AddHost(t.Context(), "twice", HostOptions{}); err == nil {
		t.Error("a second host of one name was accepted")
	}
}

func TestOverridesByName(t *testing.T) {
	needNetwork(t)
	_, far, err := ParseOverride("redlock-5=rtt=8ms")
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(t.Context(), Options{Prefix: testPrefix, Profile: Rack, Hosts: map[string]Profile{"redlock-5": far}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	near := addHost(t, n, "redlock-1", nil)
	farHost := addHost(t, n, "redlock-5", nil)
	if near.Profile() != Rack || farHost.Profile() != far {
		t.Fatalf("profiles %v and %v, want rack and %v", near.Profile(), farHost.Profile(), far)
	}
	m, err := n.Measure(t.Context(), farHost, MeasureOptions{Samples: 5})
	if err != nil {
		t.Fatal(err)
	}
	if low := floorOf(n, 8*time.Millisecond, 0); m.RTT.Min < low {
		t.Errorf("the far master's rtt min %v below %v", m.RTT.Min, low)
	}
}

func TestBenchSourcesReachHosts(t *testing.T) {
	n := newTestNetwork(t, Profile{})
	h := addHost(t, n, "server", nil)
	l, err := h.Listen("tcp", h.Addr(0))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sources := n.BenchSources()
	if len(sources) != 64 || sources[0] != n.BenchIP() {
		t.Fatalf("bench sources %v", sources)
	}
	for _, src := range []netip.Addr{sources[0], sources[1], sources[len(sources)-1]} {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: src.AsSlice()}, Timeout: 5 * time.Second}
		c, err := d.DialContext(t.Context(), "tcp", l.Addr().String())
		if err != nil {
			t.Fatalf("from %s: %v", src, err)
		}
		server, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		// The host sees the true source: nothing rewrites packets.
		if got := server.RemoteAddr().(*net.TCPAddr).AddrPort().Addr(); got != src {
			t.Errorf("dialled from %s, the host sees %s", src, got)
		}
		server.Close()
		c.Close()
	}
}

func TestRateBoundsTransfers(t *testing.T) {
	n := newTestNetwork(t, Profile{})
	p := mustProfile(t, "rtt=0,rate=8mbit")
	h := addHost(t, n, "slow", p)
	l, err := h.Listen("tcp", h.Addr(0))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(io.Discard, c)
		c.Write([]byte{1}) // all of it has arrived
	}()
	const size = 250_000
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	start := time.Now()
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	// 250 kB of payload at 8 Mbit/s take 250 ms, headers not counted.
	if low := time.Duration(float64(size*8) / float64(p.Rate) * float64(time.Second) * 0.95); took < low {
		t.Errorf("%d bytes took %v, less than the link's %v", size, took, low)
	}
	t.Logf("%d bytes at %s took %v", size, p, took)
}
