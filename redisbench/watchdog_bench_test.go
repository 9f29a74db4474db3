package redisbench

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

var watchdogLocks = flag.Int("watchdog-locks", 2_000, "locks held by BenchmarkWatchdogKeepAlives")

// BenchmarkWatchdogKeepAlives is the Redis side of monolock's
// BenchmarkClientKeepAlives (monolock/keepalive_bench_test.go), as the
// scale scenario's idle-*-lease2s load: this process holds
// -watchdog-locks locks (default 2,000) at TTL 2s through one Redis locker
// (go-redis, the default pool), each extended by its Watchdog every
// TTL/3; redis-server runs as a process of its own. It reports this
// process's CPU (user+system: watchdogs, go-redis, and the kernel's share
// of the loopback traffic on the client's side) per extension the server
// counted (EVALSHA and EVAL calls), and the locks lost meanwhile, so that
// the two clients' cost per keep-alive is compared like with like. An op
// is one extension, so ns/op is the pace of the schedule, not a cost.
func BenchmarkWatchdogKeepAlives(b *testing.B) {
	const ttl = 2 * time.Second
	n := *watchdogLocks
	b.Run(fmt.Sprintf("locks=%d", n), func(b *testing.B) {
		addr := benchtest.Start(b, Server).Servers(Server.Name)[0].Addr()
		l, err := NewRedis(Config{Addr: addr, TTL: ttl})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		probe := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
		defer probe.Close()
		held := acquireMany(b, l, n)
		defer func() {
			for _, h := range held {
				h.Release(context.Background())
			}
		}()
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cpuClock(b)
		start := extensions(b, probe)
		done, lost := start, 0
		for done < start+int64(b.N) && lost < n {
			time.Sleep(100 * time.Millisecond) // rarely: the polls are this process's CPU too
			done = extensions(b, probe)
			lost = lostLocks(held)
		}
		used := cpuClock(b) - cpu
		b.StopTimer()
		b.ReportMetric(float64(used.Nanoseconds())/float64(max(done-start, 1)), "client-cpu-ns/extension")
		b.ReportMetric(float64(lost), "lost-locks")
	})
}

// acquireMany acquires n locks of their own with a few claims at a time.
func acquireMany(b *testing.B, l *Redis, n int) []bench.Held {
	held := make([]bench.Held, n)
	var wg sync.WaitGroup
	var next atomic.Int64
	var failed atomic.Bool
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n && !failed.Load(); i = int(next.Add(1)) - 1 {
				h, err := l.Acquire(context.Background(), fmt.Sprintf("ka-%05d", i))
				if err != nil {
					b.Error(err)
					failed.Store(true)
					return
				}
				held[i] = h
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		for _, h := range held {
			if h != nil {
				h.Release(context.Background())
			}
		}
		b.FailNow()
	}
	return held
}

// extensions is the number of scripts the server has run: the
// watchdogs' compare-and-PEXPIRE calls (EVALSHA, or EVAL once after a
// NOSCRIPT); the acquires are SETs and the releases run after the count.
func extensions(b *testing.B, probe *redis.Client) int64 {
	info, err := probe.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	calls, err := parseCommandStats(info)
	if err != nil {
		b.Fatal(err)
	}
	return calls["evalsha"] + calls["eval"]
}

func lostLocks(held []bench.Held) (lost int) {
	for _, h := range held {
		select {
		case <-h.Lost():
			lost++
		default:
		}
	}
	return lost
}

// cpuClock is the process's CPU time (user and system, all threads):
// CLOCK_PROCESS_CPUTIME_ID, as monolock's client benchmarks read it.
func cpuClock(tb testing.TB) time.Duration {
	const clockProcessCPUTime = 2 // CLOCK_PROCESS_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		tb.Fatal(errno)
	}
	return time.Duration(ts.Nano())
}
