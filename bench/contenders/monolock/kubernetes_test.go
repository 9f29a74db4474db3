package monolock

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/load/shard"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/monolock"
)

// podRange is the local cluster's pod subnet.
var podRange = netip.MustParsePrefix("198.19.255.0/24")

// TestKubernetes runs monolock's server as a pod of the local cluster
// (`make cluster`; skipped when none runs) and applies each fault through
// the API, checking what a holder sees: a crash ends its hold at once, a
// pause and a network cut end it by the client's give-up at 0.8 × lease,
// and a restart serves again at the same pod address. Then two worker
// pods open idle sessions on it, and their reports merge.
func TestKubernetes(t *testing.T) {
	d := benchtest.StartKubernetes(t, Server)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var env results.Environment
	d.Describe(&env)
	if env.Backend != "kubernetes" || len(env.Servers) != 1 {
		t.Errorf("environment: backend %q, servers %+v", env.Backend, env.Servers)
	}
	s := d.Servers(Server.Name)[0]
	addr := s.Addr()
	if ap, err := netip.ParseAddrPort(addr); err != nil || !podRange.Contains(ap.Addr()) {
		t.Fatalf("server address %s: want a pod address in %s (%v)", addr, podRange, err)
	}
	const lease = 2 * time.Second
	l := New(monolock.Config{Address: addr}, lease)
	defer l.Close()
	hold := func(key string) bench.Held {
		t.Helper()
		h, err := l.Acquire(ctx, key)
		if err != nil {
			t.Fatalf("acquire %s at %s: %v", key, addr, err)
		}
		return h
	}
	lostWithin := func(what string, h bench.Held, limit time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		select {
		case <-h.Lost():
			return time.Since(start)
		case <-time.After(limit):
			t.Fatalf("%s: the holder still believes it holds the lock after %v", what, limit)
		}
		return 0
	}

	if cpu, source, ok, err := s.CPU(ctx); err != nil || !ok || cpu <= 0 {
		t.Errorf("CPU: %v from %q (ok %v): %v", cpu, source, ok, err)
	}

	// A crash closes the server's sockets: the holder learns at once.
	h := hold("crash")
	if err := s.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if took := lostWithin("kill", h, lease); took > lease/2 {
		t.Errorf("kill: the holder learned after %v, want a reset well before the lease", took)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("a killed server still accepts connections")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Addr() != addr {
		t.Errorf("restart moved the server from %s to %s", addr, s.Addr())
	}

	// A pause and a cut leave the sockets open: the client gives up at
	// 0.8 × lease, not before.
	for _, f := range []struct {
		name     string
		do, undo func(context.Context) error
	}{
		{"pause", s.Pause, s.Unpause},
		{"cut", s.Cut, s.Restore},
	} {
		h := hold(f.name)
		if err := f.do(ctx); err != nil {
			t.Fatal(err)
		}
		took := lostWithin(f.name, h, 2*lease)
		if err := f.undo(ctx); err != nil {
			t.Fatal(err)
		}
		if took < lease/4 {
			t.Errorf("%s: the holder gave up after %v, too soon for a silent server", f.name, took)
		}
		t.Logf("%s: the holder gave up after %v", f.name, took)
		again, err := l.Acquire(ctx, f.name+"-after")
		if err != nil {
			t.Fatalf("acquire after %s ended: %v", f.name, err)
		}
		again.Release(ctx)
	}

	// Two workers on their own pods, 50 idle holders each.
	spec, err := json.Marshal(shard.Spec{Contender: Contender().Name, Addrs: []string{addr}, Lease: lease, Sessions: 50, KeyPrefix: "workers-", Ramp: lease / 3, Window: lease})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := d.RunWorkers(ctx, 2, string(spec))
	if err != nil {
		t.Fatal(err)
	}
	var reports []shard.Report
	for _, o := range outs {
		r, err := shard.ReadReport(o.Stdout)
		if err != nil {
			t.Fatalf("worker %d on %s: %v: %s", o.Index, o.Node, err, o.Stdout)
		}
		reports = append(reports, r)
	}
	m, err := shard.Merge(reports)
	if err != nil {
		t.Fatal(err)
	}
	if m.Workers != 2 || m.Held != 100 || m.Acquire.TotalCount() != 100 {
		t.Errorf("merged workers: %d workers, %d of %d held, %d acquire latencies; want 2, 100 of 100, 100", m.Workers, m.Held, m.Sessions, m.Acquire.TotalCount())
	}
}
