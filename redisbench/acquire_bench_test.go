package redisbench

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/benchtest"
)

// BenchmarkAcquireLatency is the Redis side of monolock's
// BenchmarkAcquireLatency/tcp/warm (monolock/warm_bench_test.go): one
// uncontended Acquire (SET NX PX on a pooled connection, and the start of
// its watchdog; the Release is not timed) on loopback against
// redis-server, claims spaced by the same untimed 2ms pause. It reports
// the median and p99 of the Acquire calls.
func BenchmarkAcquireLatency(b *testing.B) {
	addr := benchtest.Start(b, Server).Servers(Server.Name)[0].Addr()
	l, err := NewRedis(Config{Addr: addr, TTL: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	names := make([]string, 64)
	for i := range names {
		names[i] = fmt.Sprintf("bench/%d", i)
	}
	ctx := context.Background()
	// Spaced claims, as one process's claims usually are, and back to
	// back, as the suite's latency scenario makes them (w1).
	for _, gap := range []time.Duration{2 * time.Millisecond, 0} {
		b.Run("gap="+gap.String(), func(b *testing.B) {
			cycle := func(i int) time.Duration {
				t0 := time.Now()
				h, err := l.Acquire(ctx, names[i%len(names)])
				d := time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				if err := h.Release(ctx); err != nil {
					b.Fatal(err)
				}
				time.Sleep(gap)
				return d
			}
			for i := range 20 { // the pool's connections, the scripts loaded
				cycle(i)
			}
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
		})
	}
}
