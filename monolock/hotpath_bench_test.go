package monolock

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

// The client's hot paths over real loopback TCP against an in-process
// server. Beside ns/op (wall time, which on a shared machine includes
// other load) each reports the process CPU per operation: client and
// server together, since both run here.

// cpuClock is the process's CPU time (user and system, all threads):
// CLOCK_PROCESS_CPUTIME_ID, exact to the nanosecond, where getrusage's
// tick-based figures make short intervals (one claim) meaningless.
func cpuClock(tb testing.TB) time.Duration {
	const clockProcessCPUTime = 2 // CLOCK_PROCESS_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		tb.Fatal(errno)
	}
	return time.Duration(ts.Nano())
}

// BenchmarkClientAcquire is Acquire + Release of an uncontended lock:
// cold dials a connection per claim, back to back; warm claims on the
// Client's spares (Config.Spares), each claim made once the spares are
// quiet (untimed; see waitQuiet): back to back, claims would outrun the
// refill and blend cold claims into the warm figure. cpu-ns/op is the process CPU (client
// and server) of the timed part. Warm reports the share of claims that
// found no spare ready and dialled their own: 0 by construction.
func BenchmarkClientAcquire(b *testing.B) {
	for _, mode := range []struct {
		name   string
		spares int
	}{{"cold", 0}, {"warm", 4}} {
		b.Run(mode.name, func(b *testing.B) {
			srv := monolocktest.NewServer(b)
			c := New(Config{Address: srv.Addr, Spares: mode.spares})
			defer c.Close()
			names := make([]string, 64)
			for i := range names {
				names[i] = fmt.Sprintf("bench/%d", i)
			}
			b.ReportAllocs()
			var cpu time.Duration
			i := 0
			for b.Loop() {
				if c.spares != nil {
					b.StopTimer()
					c.spares.waitQuiet()
					b.StartTimer()
				}
				t0 := cpuClock(b)
				l, err := c.Acquire(b.Context(), names[i%len(names)], 5*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(); err != nil {
					b.Fatal(err)
				}
				cpu += cpuClock(b) - t0
				i++
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			if c.spares != nil {
				b.ReportMetric(100*float64(c.spares.missed.Load())/float64(b.N), "spare-miss-%")
			}
		})
	}
}

// waitQuiet returns once more than half of the spares are ready and none
// is being dialled: no refill is then due or under way (one starts only
// when half are taken), so the next claim meets no dial of its own Client.
func (p *spares) waitQuiet() {
	for {
		p.mu.Lock()
		quiet := len(p.idle) > p.max/2 && p.dialing == 0
		p.mu.Unlock()
		if quiet {
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// countingDialer counts the writes on the connections it dials: after the
// ACQUIRE, every write of a Lock is a HEARTBEAT.
type countingDialer struct {
	d      net.Dialer
	writes atomic.Int64
	wrote  chan struct{} // a write happened (capacity 1)
}

func (d *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, d: d}, nil
}

type countingConn struct {
	net.Conn
	d *countingDialer
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.d.writes.Add(1)
	select {
	case c.d.wrote <- struct{}{}:
	default:
	}
	return c.Conn.Write(p)
}

// BenchmarkClientHeartbeat holds 64 locks with a 400ms lease (each
// heartbeats every 100ms, the documented schedule's floor) and reports the
// process CPU per heartbeat (client keepers and readers, and the server,
// together); ns/op is the schedule's pace, not a cost.
func BenchmarkClientHeartbeat(b *testing.B) {
	const locks, lease = 64, 400 * time.Millisecond
	srv := monolocktest.NewServer(b)
	d := &countingDialer{wrote: make(chan struct{}, 1)}
	c := New(Config{Address: srv.Addr, Dialer: d})
	held := make([]*Lock, locks)
	for i := range held {
		l, err := c.Acquire(b.Context(), fmt.Sprintf("hb/%d", i), lease)
		if err != nil {
			b.Fatal(err)
		}
		held[i] = l
	}
	b.ReportAllocs()
	cpu, sent := cpuClock(b), d.writes.Load()
	target := sent
	for b.Loop() {
		target++
		for d.writes.Load() < target {
			<-d.wrote
		}
	}
	heartbeats := d.writes.Load() - sent
	b.ReportMetric(float64((cpuClock(b)-cpu).Nanoseconds())/float64(max(heartbeats, 1)), "cpu-ns/heartbeat")
	for _, l := range held {
		if err := l.Release(); err != nil {
			b.Fatalf("lock %s lost: %v", l.Name(), err)
		}
	}
}
