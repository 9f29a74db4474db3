package monolock_test

import (
	"fmt"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// BenchmarkCycle compares one uncontended acquire+release through the
// client with the same cycle written against the raw protocol (dial, one
// ACQUIRE out, one ACQUIRED in, close) on the same in-process server. The
// difference is the client's overhead: goroutines, timers, channels.
// Names rotate over a small set so that a lock whose release the server
// has not processed yet rarely makes the next claim queue.
func BenchmarkCycle(b *testing.B) {
	srv := monolocktest.NewServer(b)
	const lease = 5 * time.Second
	names := make([]string, 64)
	frames := make([][]byte, len(names))
	for i := range names {
		names[i] = fmt.Sprintf("bench/%d", i)
		frames[i] = protocol.AppendAcquire(nil, uint32(lease.Milliseconds()), names[i])
	}
	d := net.Dialer{KeepAlive: -1} // the client's default dialer: no TCP keep-alive
	raw := func(b *testing.B, i int) {
		var buf [protocol.AcquiredLen]byte
		conn, err := d.DialContext(b.Context(), "tcp", srv.Addr)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Write(frames[i%len(frames)]); err != nil {
			b.Fatal(err)
		}
		for { // skip a WAITING: the previous claim's close is still in flight
			if _, err := io.ReadFull(conn, buf[:1]); err != nil {
				b.Fatal(err)
			}
			if protocol.Type(buf[0]) != protocol.TypeWaiting {
				break
			}
		}
		if protocol.Type(buf[0]) != protocol.TypeAcquired {
			b.Fatalf("frame type 0x%02x", buf[0])
		}
		if _, err := io.ReadFull(conn, buf[1:]); err != nil {
			b.Fatal(err)
		}
		conn.(*net.TCPConn).SetLinger(0) // the client's close: a reset
		conn.Close()
	}
	c := monolock.New(monolock.Config{Address: srv.Addr})
	client := func(b *testing.B, i int) {
		l, err := c.Acquire(b.Context(), names[i%len(names)], lease)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(); err != nil {
			b.Fatal(err)
		}
	}
	for _, bm := range []struct {
		name  string
		cycle func(*testing.B, int)
	}{{"raw", raw}, {"client", client}} {
		b.Run(bm.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				bm.cycle(b, i)
				i++
			}
		})
	}
	// On a shared machine load drifts between two sub-benchmarks; here
	// the two cycles alternate, and the medians of each are compared.
	b.Run("interleaved", func(b *testing.B) {
		var rawD, clientD []time.Duration
		i := 0
		for b.Loop() {
			t0 := time.Now()
			raw(b, i)
			t1 := time.Now()
			client(b, i+1)
			rawD, clientD = append(rawD, t1.Sub(t0)), append(clientD, time.Since(t1))
			i += 2
		}
		r, cl := median(rawD), median(clientD)
		b.ReportMetric(float64(r.Nanoseconds()), "raw-p50-ns")
		b.ReportMetric(float64(cl.Nanoseconds()), "client-p50-ns")
		b.ReportMetric(100*(float64(cl)/float64(r)-1), "overhead-%")
	})
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
