package monolock

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/monolock"
)

// TestContainerFastOpen runs the TFO server spec and the plain one in
// containers and acquires on each with a TCP Fast Open client. The host
// keeps server-side TFO off (net.ipv4.tcp_fastopen=1 here), so SYN data
// accepted by the TFO server's container proves that the container got
// its namespaced sysctl and its listener took a TFO connection; the plain
// server, without either, takes none. The evidence is the client-side
// kernel counter TCPFastOpenActive of this (the bench's) namespace.
func TestContainerFastOpen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	benchtest.RequireDocker(t)
	if _, err := host.ReadFastOpen(); err != nil {
		t.Skipf("no TCP Fast Open counters here: %v", err)
	}
	if b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_fastopen"); err != nil || !clientBit(string(b)) {
		t.Skipf("net.ipv4.tcp_fastopen=%q (%v): this namespace's clients cannot use TFO", b, err)
	}
	d, err := containers.Start(ctx, []*bench.ServerSpec{FastOpenServer, Server})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })

	var env results.Environment
	d.Describe(&env)
	if got := env.Sysctls["monolock-tfo: net.ipv4.tcp_fastopen"]; !strings.HasPrefix(got, "3 ") {
		t.Errorf("environment records the TFO server's sysctl as %q, want 3 (...)", got)
	}

	const acquisitions = 5
	active := func(addr string) int64 {
		l := New(monolock.Config{Address: addr, TCPFastOpen: true}, 5*time.Second)
		defer l.Close()
		before, err := host.ReadFastOpen()
		if err != nil {
			t.Fatal(err)
		}
		for range acquisitions {
			h, err := l.Acquire(ctx, "tfo1")
			if err != nil {
				t.Fatalf("acquire on %s: %v", addr, err)
			}
			if err := h.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		after, err := host.ReadFastOpen()
		if err != nil {
			t.Fatal(err)
		}
		n := after.Sub(before)
		t.Logf("%s: %d acquisitions, TFO counters %+v", addr, acquisitions, n)
		return n.Active
	}
	tfo := d.Servers(FastOpenServer.Name)[0].Addr()
	plain := d.Servers(Server.Name)[0].Addr()
	// The first acquisition fetches the server's cookie; the later ones carry
	// their ACQUIRE in the SYN.
	if n := active(tfo); n < 1 {
		t.Errorf("TFO server: %d connections with accepted SYN data in %d acquisitions, want at least 1", n, acquisitions)
	}
	if n := active(plain); n != 0 {
		t.Errorf("plain server: %d connections with accepted SYN data, want 0 (no -tcp-fastopen, no sysctl)", n)
	}
}

// clientBit reports whether a net.ipv4.tcp_fastopen value has the client
// bit 0x1.
func clientBit(v string) bool {
	var n int
	for _, ch := range strings.TrimSpace(v) {
		if ch < '0' || ch > '9' {
			return false
		}
		n = n*10 + int(ch-'0')
	}
	return n&1 == 1
}
