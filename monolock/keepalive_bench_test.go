package monolock

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/server"
)

// serverChildEnv makes the test binary a child process that runs a
// monolock server, so that the parent's process CPU is the client's alone.
const serverChildEnv = "MONOLOCK_BENCH_SERVER_CHILD"

var keepAliveLocks = flag.Int("keepalive-locks", 2_000, "locks held by BenchmarkClientKeepAlives")

func TestMain(m *testing.M) {
	if os.Getenv(serverChildEnv) != "" {
		os.Exit(runServerChild())
	}
	os.Exit(m.Run())
}

// BenchmarkClientKeepAlives is the client's side of the keep-alives of
// many locks at a short lease, as the scale scenario's idle-max-lease2s
// load: this process holds -keepalive-locks locks (default 2,000) at lease
// 2s through one Client (its default Dialer), each heartbeating on the
// documented schedule; the server runs in a child process. It reports this
// process's CPU (user+system: keepers, readers, timers, and the kernel's
// share of the loopback traffic on the client's side) per heartbeat the
// server answered, and the locks lost meanwhile. An op is one heartbeat,
// so ns/op is the pace of the schedule, not a cost.
func BenchmarkClientKeepAlives(b *testing.B) {
	const lease = 2 * time.Second
	n := *keepAliveLocks
	b.Run(fmt.Sprintf("locks=%d", n), func(b *testing.B) {
		raiseOpenFileLimit(b, uint64(n)+200)
		srv := startServerChild(b)
		defer srv.stop(b)
		c := New(Config{Address: srv.addr})
		held := acquireMany(b, c, n, lease)
		defer func() {
			for _, l := range held {
				l.Release()
			}
		}()
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cpuClock(b)
		start := srv.heartbeats(b)
		answered, lost := start, 0
		var why error
		for answered < start+b.N && lost < n {
			time.Sleep(100 * time.Millisecond) // rarely: the polls are this process's CPU too
			answered = srv.heartbeats(b)
			lost, why = lostLocks(held)
		}
		used := cpuClock(b) - cpu
		b.StopTimer()
		if why != nil {
			b.Log(why)
		}
		b.ReportMetric(float64(used.Nanoseconds())/float64(max(answered-start, 1)), "client-cpu-ns/heartbeat")
		b.ReportMetric(float64(lost), "lost-locks")
	})
}

// lostLocks counts the locks lost and says why the first was.
func lostLocks(held []*Lock) (lost int, first error) {
	for _, l := range held {
		if err := l.Err(); err != nil {
			if lost == 0 {
				first = fmt.Errorf("lock %s lost: %w", l.Name(), err)
			}
			lost++
		}
	}
	return lost, first
}

// acquireMany acquires n locks of their own with a few claims at a time.
func acquireMany(b *testing.B, c *Client, n int, lease time.Duration) []*Lock {
	held := make([]*Lock, n)
	var wg sync.WaitGroup
	var next atomic.Int64
	var failed atomic.Bool
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n && !failed.Load(); i = int(next.Add(1)) - 1 {
				l, err := c.Acquire(context.Background(), fmt.Sprintf("ka-%05d", i), lease)
				if err != nil {
					b.Error(err)
					failed.Store(true)
					return
				}
				held[i] = l
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		for _, l := range held {
			if l != nil {
				l.Release()
			}
		}
		b.FailNow()
	}
	return held
}

func raiseOpenFileLimit(b *testing.B, need uint64) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		b.Fatal(err)
	}
	r.Cur = max(r.Cur, min(need, r.Max))
	if r.Max < need {
		b.Skipf("RLIMIT_NOFILE hard limit %d < %d", r.Max, need)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		b.Skipf("cannot raise RLIMIT_NOFILE to %d: %v", need, err)
	}
}

// serverChild is the child process of BenchmarkClientKeepAlives and
// BenchmarkWarmAcquire.
type serverChild struct {
	cmd  *exec.Cmd
	addr string
	in   io.WriteCloser
	out  *bufio.Reader
}

func startServerChild(b *testing.B) *serverChild {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverChildEnv+"=1")
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &serverChild{cmd: cmd, in: in, out: bufio.NewReader(out)}
	line, err := s.out.ReadString('\n')
	if err != nil {
		s.stop(b)
		b.Fatalf("server child: %q, %v", line, err)
	}
	s.addr = strings.TrimSpace(line)
	return s
}

// heartbeats asks the child for the server's heartbeat count.
func (s *serverChild) heartbeats(b *testing.B) int {
	if _, err := io.WriteString(s.in, "?\n"); err != nil {
		b.Fatal(err)
	}
	line, err := s.out.ReadString('\n')
	n, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		b.Fatalf("server child: %q, %v", line, err)
	}
	return n
}

func (s *serverChild) stop(b *testing.B) {
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		b.Errorf("server child: %v", err)
	}
}

// runServerChild serves on a loopback port (printed first), answers every
// line on stdin with the server's heartbeat count, and stops when stdin
// closes.
func runServerChild() int {
	srv, err := server.New(server.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := (&net.ListenConfig{KeepAlive: -1}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go srv.Serve(l)
	fmt.Println(l.Addr())
	const counter = "monolock_heartbeats_total "
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		rec := httptest.NewRecorder()
		srv.OpsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		n := "-1"
		for line := range strings.Lines(rec.Body.String()) {
			if v, ok := strings.CutPrefix(line, counter); ok {
				n = strings.TrimSpace(v)
			}
		}
		fmt.Println(n)
	}
	srv.Close()
	return 0
}
