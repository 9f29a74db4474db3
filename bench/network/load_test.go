package network

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// startFloor starts the floor helper (a tcp-floor-like server) in h, or
// in the bench's namespace when h is nil, listening on addr, and returns
// its address.
func startFloor(t *testing.T, h *Host, addr string) string {
	t.Helper()
	var cmd *exec.Cmd
	if h == nil {
		cmd = exec.CommandContext(t.Context(), os.Args[0])
	} else {
		cmd = h.Command(t.Context(), os.Args[0])
	}
	cmd.Env = append(os.Environ(), helperEnv+"=floor "+addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("floor helper: %v", err)
	}
	got, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTENING ")
	if !ok {
		t.Fatalf("floor helper said %q", line)
	}
	return got
}

// loadResult is one run of short connections.
type loadResult struct {
	cycles   int
	failed   int
	firstErr error
	elapsed  time.Duration
	p50, p99 time.Duration
}

func (r loadResult) perSecond() float64 { return float64(r.cycles) / r.elapsed.Seconds() }

// shortConnections runs workers that each loop connect, write 12 bytes,
// read 9, close, against addr for d.
func shortConnections(ctx context.Context, addr string, workers int, d time.Duration) loadResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	deadline, _ := ctx.Deadline()
	over := func() bool { return !time.Now().Before(deadline) }
	lat := make([][]time.Duration, workers)
	fails := make([]int, workers)
	var errMu sync.Mutex
	var firstErr error
	fail := func(w int, err error) {
		fails[w]++
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
	}
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			req, resp := make([]byte, 12), make([]byte, 9)
			var dialer net.Dialer
			for ctx.Err() == nil {
				t0 := time.Now()
				c, err := dialer.DialContext(ctx, "tcp", addr)
				if err != nil {
					if !over() {
						fail(w, err)
					}
					continue
				}
				c.SetDeadline(time.Now().Add(5 * time.Second))
				_, err = c.Write(req)
				if err == nil {
					_, err = io.ReadFull(c, resp)
				}
				c.Close()
				if err != nil {
					if !over() {
						fail(w, err)
					}
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := loadResult{cycles: len(all), elapsed: time.Since(start), firstErr: firstErr}
	for _, f := range fails {
		r.failed += f
	}
	if len(all) > 0 {
		r.p50, r.p99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r
}

// TestLineUnderLoad runs the throughput scenario's shape — 64 workers of
// short TCP connections — against a server on the direct path and
// through the line, and shows what the line adds: its CPU, packets/s and
// how late it lets packets leave. Physics only is asserted: a cycle
// through a link of RTT r takes at least 2r less the line's early sends,
// and the line drops nothing at this load.
func TestLineUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test; skipped with -short")
	}
	n := newTestNetwork(t, Profile{})
	workers, d := 64, 3*time.Second
	direct := startFloor(t, nil, "127.0.0.1:0")
	r := shortConnections(t.Context(), direct, workers, d)
	t.Logf("direct 127.0.0.1: %.0f cycles/s, cycle p50 %v p99 %v, failed %d (%v)", r.perSecond(), r.p50, r.p99, r.failed, r.firstErr)

	h := addHost(t, n, "floor", nil)
	addr := startFloor(t, h, h.Addr(7000))
	for _, p := range []Profile{{}, Rack, AZ} {
		if err := h.SetProfile(p); err != nil {
			t.Fatal(err)
		}
		before, err := n.Stats()
		if err != nil {
			t.Fatal(err)
		}
		r := shortConnections(t.Context(), addr, workers, d)
		after, err := n.Stats()
		if err != nil {
			t.Fatal(err)
		}
		s := after.Sub(before)
		t.Logf("line %s: %.0f cycles/s, cycle p50 %v p99 %v, failed %d (%v) | %v, early %d",
			p, r.perSecond(), r.p50, r.p99, r.failed, r.firstErr, s, s.Early)
		if s.Dropped.Queue != 0 || s.Dropped.WriteErr != 0 {
			t.Errorf("line %s dropped packets under load: %+v", p, s.Dropped)
		}
		if low := 2*(p.RTT-n.Calibration().OwnRTT) - 4*maxLead; r.cycles > 0 && slices.Min([]time.Duration{r.p50}) < low {
			t.Errorf("line %s: cycle p50 %v below the physics bound %v", p, r.p50, low)
		}
	}
}
