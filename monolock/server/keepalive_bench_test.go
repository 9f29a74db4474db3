package server_test

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// heartbeatClientsEnv makes the test binary a child process that holds
// owners heartbeating on the documented schedule, so that the parent's
// process CPU is the server's alone.
const heartbeatClientsEnv = "MONOLOCK_BENCH_HEARTBEAT_CLIENTS"

var keepAliveSessions = flag.Int("keepalive-sessions", 2_000, "sessions held by BenchmarkServerKeepAlives")

// BenchmarkServerKeepAlives is the keep-alive cost of a server holding
// many sessions at a short lease, as the scale scenario's idle-max-lease2s
// does: a child process holds the sessions (each the owner of its own
// lock, lease 2s) and sends each one's HEARTBEAT every lease/4, at random
// phases, over loopback TCP; the server runs in this process, which does
// nothing else. It reports the server's CPU (user+system, the kernel's
// share of the loopback traffic on its side included) per heartbeat
// answered, and the sessions lost meanwhile (the server ended them: on a
// loaded machine, heartbeats that came too late). An op is one heartbeat,
// so ns/op is the pace of the schedule, not a cost.
//
// The number of sessions is -keepalive-sessions (default 2,000, so that
// `make test` runs it in seconds); the scale scenario holds up to 20,000.
func BenchmarkServerKeepAlives(b *testing.B) {
	benchmarkKeepAlives(b, func(b *testing.B) string { return monolocktest.NewServer(b).Addr })
}

// benchmarkKeepAlives runs -keepalive-sessions heartbeating owners (lease
// 2s) in a child process against the server serve starts in this
// process, and reports this process's CPU per heartbeat answered and the
// sessions lost meanwhile.
func benchmarkKeepAlives(b *testing.B, serve func(b *testing.B) string) {
	const lease = 2 * time.Second
	sessions := *keepAliveSessions
	b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
		raiseOpenFileLimit(b, uint64(sessions)+200)
		child := startHeartbeatClients(b, serve(b), sessions, lease)
		defer child.stop(b)
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cpuClock(b)
		start, _ := child.counts(b)
		answered, lost := start, 0
		for answered < start+b.N && lost < sessions {
			time.Sleep(100 * time.Millisecond) // rarely: the polls are this process's CPU too
			answered, lost = child.counts(b)
		}
		used := cpuClock(b) - cpu
		b.StopTimer()
		b.ReportMetric(float64(used.Nanoseconds())/float64(max(answered-start, 1)), "server-cpu-ns/heartbeat")
		b.ReportMetric(float64(lost), "lost-sessions")
	})
}

// heartbeatClients is the child process of BenchmarkServerKeepAlives.
type heartbeatClients struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startHeartbeatClients(b *testing.B, addr string, n int, lease time.Duration) *heartbeatClients {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d", heartbeatClientsEnv, addr, n, lease.Milliseconds()))
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &heartbeatClients{cmd: cmd, in: in, out: bufio.NewReader(out)}
	if line, err := c.out.ReadString('\n'); err != nil || line != "ready\n" {
		c.stop(b)
		b.Fatalf("child: %q, %v", line, err)
	}
	return c
}

// counts asks the child how many heartbeats have been answered and how
// many sessions were lost so far.
func (c *heartbeatClients) counts(b *testing.B) (answered, lost int) {
	if _, err := io.WriteString(c.in, "?\n"); err != nil {
		b.Fatal(err)
	}
	line, err := c.out.ReadString('\n')
	if err == nil {
		_, err = fmt.Sscan(line, &answered, &lost)
	}
	if err != nil {
		b.Fatalf("child: %q, %v", line, err)
	}
	return answered, lost
}

func (c *heartbeatClients) stop(b *testing.B) {
	c.in.Close()
	if err := c.cmd.Wait(); err != nil {
		b.Errorf("child: %v", err)
	}
}

// runHeartbeatClients is the child: it opens n sessions to addr, each the
// owner of its own lock with the given lease, heartbeats each every
// lease/4 from a random phase, prints "ready" once all are granted,
// answers every line on stdin with the heartbeats answered and the
// sessions lost so far, and closes the sessions when stdin closes.
func runHeartbeatClients(spec string) int {
	var addr string
	var n, ms int
	if f := strings.Split(spec, ","); len(f) == 3 {
		addr = f[0]
		n, _ = strconv.Atoi(f[1])
		ms, _ = strconv.Atoi(f[2])
	}
	hc := &heartbeaters{interval: time.Duration(ms) * time.Millisecond / 4}
	// Sessions are opened by a few workers at once: one at a time, 10,000
	// take minutes on a loaded machine.
	var (
		opening sync.WaitGroup
		next    atomic.Int64
		failed  atomic.Bool
	)
	for range 8 {
		opening.Go(func() {
			for i := int(next.Add(1)) - 1; i < n && !failed.Load(); i = int(next.Add(1)) - 1 {
				if err := hc.open(addr, uint32(ms), fmt.Sprintf("hb-%05d", i)); err != nil {
					fmt.Fprintf(os.Stderr, "heartbeat client %d: %v\n", i, err)
					failed.Store(true)
				}
			}
		})
	}
	opening.Wait()
	if !failed.Load() {
		fmt.Println("ready")
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			fmt.Println(hc.answered.Load(), hc.lost.Load())
		}
	}
	hc.close()
	if failed.Load() {
		return 1
	}
	return 0
}

// heartbeaters are the child's sessions, each with a goroutine that
// heartbeats it.
type heartbeaters struct {
	interval       time.Duration
	answered, lost atomic.Int64
	stopped        atomic.Bool
	wg             sync.WaitGroup
	mu             sync.Mutex
	conns          []net.Conn
}

// open makes one session the owner of name and starts its heartbeats.
func (h *heartbeaters) open(addr string, ms uint32, name string) error {
	c, err := dialer.Dial("tcp", addr)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.conns = append(h.conns, c)
	h.mu.Unlock()
	var ans [protocol.AcquiredLen]byte
	if _, err := c.Write(protocol.AppendAcquire(nil, ms, name)); err != nil {
		return err
	}
	if _, err := io.ReadFull(c, ans[:]); err != nil {
		return err
	}
	if protocol.Type(ans[0]) != protocol.TypeAcquired {
		return fmt.Errorf("answer type 0x%02x", ans[0])
	}
	h.wg.Go(func() {
		hb := protocol.AppendHeartbeat(nil)
		next := time.Now().Add(rand.N(h.interval))
		for {
			time.Sleep(time.Until(next))
			next = next.Add(h.interval)
			_, err := c.Write(hb)
			if err == nil {
				_, err = io.ReadFull(c, ans[:])
			}
			if err != nil {
				if !h.stopped.Load() {
					h.lost.Add(1)
				}
				return
			}
			h.answered.Add(1)
		}
	})
	return nil
}

// close ends every session and waits for the heartbeat goroutines.
func (h *heartbeaters) close() {
	h.stopped.Store(true)
	h.mu.Lock()
	for _, c := range h.conns {
		c.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
}
