package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// idleClientsEnv makes the test binary a child process that holds idle
// sessions open, so that the parent measures server memory alone.
const idleClientsEnv = "MONOLOCK_BENCH_IDLE_CLIENTS"

func TestMain(m *testing.M) {
	if spec := os.Getenv(idleClientsEnv); spec != "" {
		os.Exit(runIdleClients(spec))
	}
	if spec := os.Getenv(heartbeatClientsEnv); spec != "" {
		os.Exit(runHeartbeatClients(spec))
	}
	os.Exit(m.Run())
}

// floorServer is the do-nothing baseline: per connection it reads one
// 12-byte frame, writes 9 bytes and closes when the client does — the bytes
// of an uncontended monolock claim with a 4-byte name, and nothing else. It
// listens as monolocktest does (no TCP keep-alive), so that both pay the
// same system calls per connection.
func floorServer(b *testing.B) string {
	l, err := (&net.ListenConfig{KeepAlive: -1}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var in [12]byte
				if _, err := io.ReadFull(c, in[:]); err != nil {
					return
				}
				c.Write(protocol.AppendAcquired(make([]byte, 0, 9), 1))
				io.ReadFull(c, in[:1]) // until the client closes
			}()
		}
	}()
	return l.Addr().String()
}

// cycleName returns the 4-byte lock name of cycle i: every cycle takes a
// lock of its own, so that none waits for the server to notice the close
// of a previous claim on the same name.
func cycleName(i uint32) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_"
	return string([]byte{digits[i>>18&63], digits[i>>12&63], digits[i>>6&63], digits[i&63]})
}

// dialer dials as the monolock client's default dialer does: without TCP
// keep-alive.
var dialer = net.Dialer{KeepAlive: -1}

// cycle runs connect → ACQUIRE → ACQUIRED → close once, on a lock of its
// own (uncontended).
func cycle(addr string, name string, frame []byte) error {
	c, err := dialer.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write(protocol.AppendAcquire(frame[:0], 10_000, name)); err != nil {
		return err
	}
	var buf [protocol.AcquiredLen]byte
	if _, err := io.ReadFull(c, buf[:]); err != nil || buf[0] != byte(protocol.TypeAcquired) {
		return fmt.Errorf("answer %x, %v", buf, err)
	}
	return nil
}

// BenchmarkCycleVsFloor runs claim cycles against the monolock server and the
// do-nothing floor server in alternating rounds (so that load from other
// processes hits both alike), each round with 4 concurrent clients doing 50
// cycles each, and reports both rates and monolock's share of the floor.
func BenchmarkCycleVsFloor(b *testing.B) {
	const workers, perWorker = 4, 50
	addrs := [2]string{monolocktest.NewServer(b).Addr, floorServer(b)}
	var (
		next    atomic.Uint32
		elapsed [2]time.Duration
		cycles  [2]int
	)
	b.ResetTimer()
	for cycles[0] < b.N {
		for i, addr := range addrs {
			start := time.Now()
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					frame := make([]byte, 0, 12)
					for range perWorker {
						if err := cycle(addr, cycleName(next.Add(1)), frame); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			elapsed[i] += time.Since(start)
			cycles[i] += workers * perWorker
		}
	}
	monolock := float64(cycles[0]) / elapsed[0].Seconds()
	floor := float64(cycles[1]) / elapsed[1].Seconds()
	b.ReportMetric(monolock, "monolock-cycles/s")
	b.ReportMetric(floor, "floor-cycles/s")
	b.ReportMetric(100*monolock/floor, "%-of-floor")
}

// BenchmarkIdleSessionMemory opens 10,000 idle sessions (each the owner of
// its own lock, lease 10 minutes, after one heartbeat) from a child process and reports the
// server's heap and stack growth per session, together (B/session) and
// apart, after a collection, and the growth of the process's anonymous
// resident memory before it (anon-B/session, garbage included, as the
// scale scenario measures a server). Run it with -benchtime=1x.
func BenchmarkIdleSessionMemory(b *testing.B) {
	const sessions = 10_000
	raiseOpenFileLimit(b, sessions+200)
	for range b.N {
		ts := monolocktest.NewServer(b)
		heapBefore, stackBefore := serverMemory()
		anonBefore := anonMemory(b)
		goroutines := runtime.NumGoroutine()

		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d", idleClientsEnv, ts.Addr, sessions))
		child.Stderr = os.Stderr
		stdin, _ := child.StdinPipe()
		stdout, _ := child.StdoutPipe()
		if err := child.Start(); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line != "ready\n" {
			b.Fatalf("child: %q, %v", line, err)
		}
		if st := ts.Server().Stats(); st.Connections != sessions || st.LocksHeld != sessions {
			b.Fatalf("Stats = %+v", st)
		}
		anonAfter := anonMemory(b)
		heapAfter, stackAfter := serverMemory()
		// Signed: with idle sessions parked in epoll the stack in use can
		// shrink (the accepting goroutines' stacks freed), and an unsigned
		// difference then read as 1.8e15 B/session.
		heap := (float64(heapAfter) - float64(heapBefore)) / sessions
		stack := (float64(stackAfter) - float64(stackBefore)) / sessions
		b.ReportMetric(heap+stack, "B/session")
		b.ReportMetric(heap, "heap-B/session")
		b.ReportMetric(stack, "stack-B/session")
		b.ReportMetric((float64(anonAfter)-float64(anonBefore))/sessions, "anon-B/session")
		b.ReportMetric(float64(runtime.NumGoroutine()-goroutines)/sessions, "goroutines/session")
		stdin.Close()
		if err := child.Wait(); err != nil {
			b.Fatalf("child: %v", err)
		}
		ts.Close()
	}
}

// serverMemory is the heap in use and the goroutine stacks, after a GC.
func serverMemory() (heap, stack uint64) {
	runtime.GC()
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.StackInuse
}

// anonMemory is the process's anonymous resident memory (RssAnon), what
// the scale scenario reads from the server container's cgroup: the heap
// with the garbage not yet collected, and the stacks.
func anonMemory(b *testing.B) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("RssAnon: %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	b.Skip("no RssAnon in /proc/self/status")
	return 0
}

func raiseOpenFileLimit(b *testing.B, need uint64) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		b.Fatal(err)
	}
	r.Cur = max(r.Cur, min(need, r.Max))
	if r.Max < need {
		r.Cur, r.Max = need, need // needs CAP_SYS_RESOURCE
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		b.Skipf("cannot raise RLIMIT_NOFILE to %d: %v", need, err)
	}
}

// runIdleClients is the child: it opens n sessions to addr, each acquiring
// its own lock and sending one heartbeat, prints "ready", and holds them
// until stdin closes.
func runIdleClients(spec string) int {
	var addr string
	var n int
	for i := len(spec) - 1; i >= 0; i-- {
		if spec[i] == ',' {
			addr = spec[:i]
			n, _ = strconv.Atoi(spec[i+1:])
			break
		}
	}
	conns := make([]net.Conn, 0, n)
	var buf [protocol.AcquiredLen]byte
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_, err = c.Write(protocol.AppendAcquire(nil, 600_000, fmt.Sprintf("idle-%05d", i)))
		}
		if err == nil {
			_, err = io.ReadFull(c, buf[:])
		}
		if err == nil { // one keep-alive, so that its path has run too
			_, err = c.Write(protocol.AppendHeartbeat(nil))
		}
		if err == nil {
			_, err = io.ReadFull(c, buf[:])
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "idle client %d: %v\n", i, err)
			return 1
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil && !errors.Is(err, os.ErrClosed) {
		return 1
	}
	for _, c := range conns {
		c.Close()
	}
	return 0
}
