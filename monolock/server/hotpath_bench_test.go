package server_test

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// The server's hot paths over real loopback TCP, each reporting beside
// ns/op (wall time, which on a shared machine includes other load) the
// process CPU per operation (client and server side of the exchange; the
// client here is raw protocol, so nearly all of it is the server and the
// kernel).

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

// reportCPU reports the CPU spent since start per operation.
func reportCPU(b *testing.B, start time.Duration, ops int) {
	b.ReportMetric(float64((cpuClock(b)-start).Nanoseconds())/float64(max(ops, 1)), "cpu-ns/op")
}

func dialAcquire(b *testing.B, addr, name string) net.Conn {
	c, err := dialer.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Write(protocol.AppendAcquire(nil, 60_000, name)); err != nil {
		b.Fatal(err)
	}
	return c
}

func readType(b *testing.B, c net.Conn, want protocol.Type) {
	var buf [protocol.AcquiredLen]byte
	n := protocol.AcquiredLen
	if want == protocol.TypeWaiting {
		n = 1
	}
	if _, err := io.ReadFull(c, buf[:n]); err != nil || protocol.Type(buf[0]) != want {
		b.Fatalf("answer %x, %v; want type 0x%02x", buf[:n], err, uint8(want))
	}
}

// BenchmarkServerAcquireRelease is one uncontended claim on a new
// connection: dial, ACQUIRE, ACQUIRED, close (the release). Each
// iteration takes a lock of its own.
func BenchmarkServerAcquireRelease(b *testing.B) {
	ts := monolocktest.NewServer(b)
	frame := make([]byte, 0, 12)
	b.ReportAllocs()
	cpu := cpuClock(b)
	i := uint32(0)
	for b.Loop() {
		if err := cycle(ts.Addr, cycleName(i), frame); err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportCPU(b, cpu, b.N)
}

// BenchmarkServerAcquireWarm is the claim on a connection dialled in
// advance (as a client's spare is): only ACQUIRE → ACQUIRED and the close
// are timed; the dial of the next connection is not.
func BenchmarkServerAcquireWarm(b *testing.B) {
	ts := monolocktest.NewServer(b)
	dial := func() net.Conn {
		c, err := dialer.Dial("tcp", ts.Addr)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	next := dial()
	frame := make([]byte, 0, 12)
	b.ReportAllocs()
	var cpu time.Duration
	i := uint32(0)
	for b.Loop() {
		c := next
		t0 := cpuClock(b)
		if _, err := c.Write(protocol.AppendAcquire(frame[:0], 60_000, cycleName(i))); err != nil {
			b.Fatal(err)
		}
		readType(b, c, protocol.TypeAcquired)
		c.Close()
		cpu += cpuClock(b) - t0
		b.StopTimer()
		next = dial()
		i++
		b.StartTimer()
	}
	next.Close()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkServerHeartbeat is HEARTBEAT → ACQUIRED on an owned lock: the
// keep-alive's server path.
func BenchmarkServerHeartbeat(b *testing.B) {
	ts := monolocktest.NewServer(b)
	c := dialAcquire(b, ts.Addr, "hb")
	defer c.Close()
	readType(b, c, protocol.TypeAcquired)
	hb := protocol.AppendHeartbeat(nil)
	b.ReportAllocs()
	cpu := cpuClock(b)
	for b.Loop() {
		if _, err := c.Write(hb); err != nil {
			b.Fatal(err)
		}
		readType(b, c, protocol.TypeAcquired)
	}
	reportCPU(b, cpu, b.N)
}

// BenchmarkServerPromotion is the handover: a waiter is queued behind the
// owner (untimed), then the owner closes and the waiter reads its pushed
// ACQUIRED (timed). The waiter is the next owner.
func BenchmarkServerPromotion(b *testing.B) {
	ts := monolocktest.NewServer(b)
	owner := dialAcquire(b, ts.Addr, "promo")
	readType(b, owner, protocol.TypeAcquired)
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		waiter := dialAcquire(b, ts.Addr, "promo")
		readType(b, waiter, protocol.TypeWaiting)
		b.StartTimer()
		t0 := cpuClock(b)
		owner.Close()
		readType(b, waiter, protocol.TypeAcquired)
		cpu += cpuClock(b) - t0
		owner = waiter
	}
	owner.Close()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// TestHeartbeatAllocatesNothing holds an owner over loopback TCP and
// counts the process's allocations per HEARTBEAT → ACQUIRED exchange: the
// client side here allocates nothing (a frame and a buffer made once), so
// any allocation would be the server's keep-alive path.
func TestHeartbeatAllocatesNothing(t *testing.T) {
	ts := monolocktest.NewServer(t)
	c, err := dialer.Dial("tcp", ts.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(protocol.AppendAcquire(nil, 60_000, "allocs")); err != nil {
		t.Fatal(err)
	}
	hb := protocol.AppendHeartbeat(nil)
	answer := make([]byte, protocol.AcquiredLen)
	exchange := func() {
		if _, err := io.ReadFull(c, answer); err != nil || protocol.Type(answer[0]) != protocol.TypeAcquired {
			t.Fatalf("answer %x, %v", answer, err)
		}
		if _, err := c.Write(hb); err != nil {
			t.Fatal(err)
		}
	}
	exchange() // reads the grant
	if n := testing.AllocsPerRun(1000, exchange); n != 0 {
		t.Fatalf("%v allocations per keep-alive, want 0", n)
	}
}
