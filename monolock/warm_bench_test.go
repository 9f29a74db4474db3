package monolock

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/testpki"
	"github.com/monolock/monolock-bench/monolock/internal/tfotest"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/server"
)

// BenchmarkAcquireLatency measures one uncontended Acquire (call to
// return; the Release is not timed) on loopback, over plain TCP and TLS:
// cold (a dial per claim), warm (Config.Spares) and tfo (Config.TCPFastOpen
// against a server with TCPFastOpen), with an in-process server. It
// reports what acquireLatency does. Claims are spaced by an untimed pause
// (a few milliseconds), as claims of one process usually are, so that a
// spare taken is replaced before the next claim; back to back, the warm
// cases would measure the refill rate instead (BenchmarkWarmAcquire does,
// too).
//
// TFO needs server-side TFO in the kernel (net.ipv4.tcp_fastopen with bit
// 0x2); without it the tfo cases are skipped. To measure them without
// changing the host, run in a private network namespace as root:
//
//	unshare -n sh -c 'ip link set lo up && sysctl -qw net.ipv4.tcp_fastopen=3 &&
//	  go test -run=^$ -bench=AcquireLatency ./monolock'
func BenchmarkAcquireLatency(b *testing.B) {
	ca := testpki.NewCA(b, "bench")
	serverTLS := &tls.Config{Certificates: []tls.Certificate{ca.Server(b).TLS}}
	clientTLS := &tls.Dialer{Config: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}}
	setting, _ := tfotest.Setting()
	gap := map[string]time.Duration{"tcp": 2 * time.Millisecond, "tls": 5 * time.Millisecond}
	for _, transport := range []string{"tcp", "tls"} {
		for _, mode := range []string{"cold", "warm", "tfo"} {
			b.Run(transport+"/"+mode, func(b *testing.B) {
				if mode == "tfo" && setting&2 == 0 {
					b.Skipf("net.ipv4.tcp_fastopen=%d: server-side TFO is off (see the doc comment)", setting)
				}
				scfg := server.Config{Logger: slog.New(slog.DiscardHandler), TCPFastOpen: mode == "tfo"}
				cfg := Config{Spares: 0, TCPFastOpen: mode == "tfo"}
				if transport == "tls" {
					scfg.TLSConfig, cfg.Dialer = serverTLS, clientTLS
				}
				if mode == "warm" {
					cfg.Spares = 4
				}
				srv := monolocktest.NewServerConfig(b, scfg)
				cfg.Address = srv.Addr
				c := New(cfg)
				defer c.Close()
				acquireLatency(b, c, gap[transport])
			})
		}
	}
}

// BenchmarkWarmAcquire is BenchmarkAcquireLatency/tcp/warm against a
// server in a child process, as redisbench's BenchmarkAcquireLatency runs
// redis-server: one uncontended Acquire on a spare (Config.Spares 8, the
// suite's monolock-warm), claims spaced by an untimed 2ms pause, as one
// process's claims usually are, and back to back, as the suite's latency
// scenario makes them (w1). To be compared with Redis's SET NX in the same
// minutes.
func BenchmarkWarmAcquire(b *testing.B) {
	srv := startServerChild(b)
	defer srv.stop(b)
	c := New(Config{Address: srv.addr, Spares: 8})
	defer c.Close()
	for _, gap := range []time.Duration{2 * time.Millisecond, 0} {
		b.Run("gap="+gap.String(), func(b *testing.B) {
			acquireLatency(b, c, gap)
		})
	}
}

// acquireLatency is the timing loop of the Acquire benchmarks: each
// iteration times one uncontended Acquire of a lock with a 5s lease (call
// to return), then releases it and pauses for gap, both untimed. Names
// rotate over a small set so that a lock whose release the server has not
// processed yet rarely makes the next claim queue. Twenty claims before
// the timing (and a pause for their refills and the server to go quiet)
// fill the spares, caches and TLS session state. It reports the median
// and p99 of the Acquire calls and, for a Client with spares, the share of
// claims that found no spare and dialled their own.
func acquireLatency(b *testing.B, c *Client, gap time.Duration) {
	const warmUp = 20
	names := make([]string, 64)
	for i := range names {
		names[i] = fmt.Sprintf("bench/%d", i)
	}
	var missed int64
	if c.spares != nil {
		missed = c.spares.missed.Load()
	}
	cycle := func(i int) time.Duration {
		t0 := time.Now()
		l, err := c.Acquire(b.Context(), names[i%len(names)], 5*time.Second)
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
		time.Sleep(gap)
		return d
	}
	for i := range warmUp {
		cycle(i)
	}
	time.Sleep(50 * time.Millisecond)
	b.ResetTimer()
	var ds []time.Duration
	i := 0
	for b.Loop() {
		ds = append(ds, cycle(i))
		i++
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "acquire-p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "acquire-p99-µs")
	if c.spares != nil {
		b.ReportMetric(100*float64(c.spares.missed.Load()-missed)/float64(warmUp+i), "spare-miss-%")
	}
}
