package spreaddial

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// acceptAll accepts n connections from ln and returns them.
func acceptAll(t *testing.T, ln net.Listener, n int) <-chan net.Conn {
	t.Helper()
	out := make(chan net.Conn, n)
	go func() {
		for range n {
			c, err := ln.Accept()
			if err != nil {
				close(out)
				return
			}
			out <- c
		}
	}()
	return out
}

func TestSourcesSpreadOnRealListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	src, err := Loopback(4)
	if err != nil {
		t.Fatal(err)
	}
	src = src[1:] // 127.0.0.2, .3, .4: none is the listener's own address
	d := &Dialer{Sources: src, Timeout: 5 * time.Second}
	const n = 30
	accepted := acceptAll(t, ln, n)
	ctx := context.Background()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	count := map[netip.Addr]int{}
	for range n {
		c := <-accepted
		conns = append(conns, c)
		ap := c.RemoteAddr().(*net.TCPAddr).AddrPort()
		count[ap.Addr().Unmap()]++
	}
	for _, a := range src {
		if count[a] != n/len(src) {
			t.Errorf("source %v: %d accepted connections, want %d (all: %v)", a, count[a], n/len(src), count)
		}
	}
	if len(count) != len(src) {
		t.Errorf("connections came from %v, want exactly %v", count, src)
	}
}

func TestDestinationsSpreadOnRealListeners(t *testing.T) {
	ln1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln1.Close()
	port := ln1.Addr().(*net.TCPAddr).Port
	ln2, err := net.Listen("tcp", net.JoinHostPort("127.0.0.6", itoa(port)))
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.6:%d as well: %v", port, err)
	}
	defer ln2.Close()
	src := []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")}
	dst := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.6")}
	d := &Dialer{Sources: src, Destinations: dst}
	if d.Pairs() != 4 {
		t.Fatalf("Pairs = %d, want 4", d.Pairs())
	}
	const n = 8
	acc1, acc2 := acceptAll(t, ln1, n/2), acceptAll(t, ln2, n/2)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		// The address asked for names neither destination: only its
		// port counts.
		c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("localhost", itoa(port)))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	pairs := map[[2]netip.Addr]int{}
	for _, acc := range []<-chan net.Conn{acc1, acc2} {
		for range n / 2 {
			c := <-acc
			conns = append(conns, c)
			r := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
			l := c.LocalAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
			pairs[[2]netip.Addr{r, l}]++
		}
	}
	for _, s := range src {
		for _, dd := range dst {
			if pairs[[2]netip.Addr{s, dd}] != 2 {
				t.Errorf("pair %v→%v: %d connections, want 2 (all: %v)", s, dd, pairs[[2]netip.Addr{s, dd}], pairs)
			}
		}
	}
}

func TestDialErrorIsPlain(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d := &Dialer{Sources: []netip.Addr{netip.MustParseAddr("127.0.0.2")}}
	if _, err := d.DialContext(context.Background(), "tcp", addr); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
	if _, err := (&Dialer{Destinations: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}).DialContext(context.Background(), "tcp", "no-port"); err == nil || !strings.Contains(err.Error(), "spreaddial") {
		t.Fatalf("address without port: err = %v", err)
	}
}

func TestParsePortRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want PortRange
		ok   bool
	}{
		{"32768\t60999\n", PortRange{32768, 60999}, true},
		{"1024 65535", PortRange{1024, 65535}, true},
		{"5 5", PortRange{5, 5}, true},
		{"60999 32768", PortRange{}, false},
		{"0 100", PortRange{}, false},
		{"1 70000", PortRange{}, false},
		{"32768", PortRange{}, false},
		{"a b", PortRange{}, false},
	} {
		got, err := parsePortRange(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parsePortRange(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestReadPortRange(t *testing.T) {
	r, err := ReadPortRange()
	if err != nil {
		t.Skipf("no net.ipv4.ip_local_port_range here: %v", err)
	}
	t.Logf("ip_local_port_range %d–%d: %d ports, %d usable per address pair", r.Low, r.High, r.Size(), r.Usable())
	if r.Size() < 1 {
		t.Fatalf("range %v", r)
	}
}

func TestPlan(t *testing.T) {
	def := PortRange{32768, 60999} // 28232 ports, 25408 usable
	two := &Dialer{Sources: make([]netip.Addr, 2)}
	four := &Dialer{Sources: make([]netip.Addr, 2), Destinations: make([]netip.Addr, 2)}
	for _, tc := range []struct {
		name      string
		sessions  int
		d         *Dialer
		pairs     int
		capacity  int
		fits      bool
		needPairs int
	}{
		{"1k plain", 1000, nil, 1, 25408, true, 1},
		{"25408 plain", 25408, nil, 1, 25408, true, 1},
		{"25409 plain", 25409, nil, 1, 25408, false, 2},
		{"50k two sources", 50000, two, 2, 50816, true, 2},
		{"100k two sources", 100000, two, 2, 50816, false, 4},
		{"100k 2×2", 100000, four, 4, 101632, true, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlan(tc.sessions, def, tc.d)
			if p.Sources*p.Destinations != tc.pairs || p.Capacity != tc.capacity || p.Fits != tc.fits {
				t.Errorf("plan %+v; want pairs %d capacity %d fits %v", p, tc.pairs, tc.capacity, tc.fits)
			}
			if got := PairsNeeded(tc.sessions, def); got != tc.needPairs {
				t.Errorf("PairsNeeded = %d, want %d", got, tc.needPairs)
			}
			if tc.fits != (p.Needed == "") {
				t.Errorf("fits %v but Needed %q", tc.fits, p.Needed)
			}
			if !tc.fits && !strings.Contains(p.Needed, "ip_local_port_range 32768–60999") {
				t.Errorf("Needed does not name the range: %q", p.Needed)
			}
		})
	}
}

func TestLoopback(t *testing.T) {
	a, err := Loopback(3)
	if err != nil || len(a) != 3 || a[0].String() != "127.0.0.1" || a[2].String() != "127.0.0.3" {
		t.Fatalf("Loopback(3) = %v, %v", a, err)
	}
	for _, n := range []int{0, 255} {
		if _, err := Loopback(n); err == nil {
			t.Errorf("Loopback(%d) did not fail", n)
		}
	}
}

func TestRouteRoundRobin(t *testing.T) {
	d := &Dialer{
		Sources:      []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")},
		Destinations: []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
	}
	var got []string
	for range 5 {
		s, a, err := d.route("example:7070")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s.String()+">"+a)
	}
	want := []string{"127.0.0.2>127.0.0.1:7070", "127.0.0.3>127.0.0.1:7070", "127.0.0.2>[::1]:7070", "127.0.0.3>[::1]:7070", "127.0.0.2>127.0.0.1:7070"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("routes\n %v\nwant\n %v", got, want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
