package network

import (
	"bufio"
	"context"
	"fmt"
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
	probe    Spread // echo round trips measured alongside
}

func (r loadResult) perSecond() float64 { return float64(r.cycles) / r.elapsed.Seconds() }

func (r loadResult) String() string {
	return fmt.Sprintf("%.0f cycles/s, cycle p50 %v p99 %v, failed %d (%v); probe rtt %v",
		r.perSecond(), r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.failed, r.firstErr, r.probe)
}

// shortConnections runs workers that each loop connect, write 12 bytes,
// read 9, close, against addr for d: closed loop when rate is 0, else
// paced to rate connections per second in all. Meanwhile a probe times
// round trips to the echo listener at probe every 2 ms.
func shortConnections(ctx context.Context, addr, probe string, workers, rate int, d time.Duration) loadResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	deadline, _ := ctx.Deadline()
	over := func() bool { return !time.Now().Before(deadline) }
	var tokens chan struct{}
	if rate > 0 {
		tokens = make(chan struct{}, workers)
		go func() {
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			owed := 0.0
			for ctx.Err() == nil {
				<-tick.C
				for owed += float64(rate) / 1000; owed >= 1; owed-- {
					select {
					case tokens <- struct{}{}:
					default: // the workers are behind: the offer is lost, and shows as a lower rate
					}
				}
			}
		}()
	}
	lat := make([][]time.Duration, workers)
	fails := make([]int, workers)
	var errMu sync.Mutex
	var firstErr error
	fail := func(w int, err error) {
		if over() {
			return
		}
		fails[w]++
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
	}
	var probes []time.Duration
	var wg sync.WaitGroup
	wg.Go(func() {
		dial := func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		}
		for ctx.Err() == nil {
			r, _, err := pingPong(ctx, dial, probe, 1, time.Second)
			if err == nil {
				probes = append(probes, r...)
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			req, resp := make([]byte, 12), make([]byte, 9)
			var dialer net.Dialer
			for ctx.Err() == nil {
				if tokens != nil {
					select {
					case <-tokens:
					case <-ctx.Done():
						return
					}
				}
				t0 := time.Now()
				c, err := dialer.DialContext(ctx, "tcp", addr)
				if err != nil {
					fail(w, err)
					continue
				}
				c.SetDeadline(time.Now().Add(5 * time.Second))
				_, err = c.Write(req)
				if err == nil {
					_, err = io.ReadFull(c, resp)
				}
				c.Close()
				if err != nil {
					fail(w, err)
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := loadResult{cycles: len(all), elapsed: time.Since(start), firstErr: firstErr, probe: spreadOf(probes)}
	for _, f := range fails {
		r.failed += f
	}
	if len(all) > 0 {
		r.p50, r.p99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r
}

// TestLineUnderLoad runs the throughput scenario's shape — 64 workers of
// short TCP connections, closed loop — against a server on the direct
// path and through the line, and shows what the line adds: its CPU,
// packets/s, how late it lets packets leave, and the round trip of a
// probe through a link that holds nothing against the same probe on the
// direct path under the same load. The configurations take turns in
// rounds, so that the load of whatever else runs on the machine falls on
// all alike; medians over rounds are logged. Asserted are physics only (a
// cycle through a link of RTT r takes at least 2r less the line's early
// sends) and that the line drops nothing at this load.
func TestLineUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test; skipped with -short")
	}
	const workers, d, rounds = 64, 1500 * time.Millisecond, 4
	type config struct {
		name    string
		n       *Network
		profile Profile
		addr    string // of the floor server
		probe   string // of an echo listener on the same path
		results []loadResult
		stats   []Stats
	}
	directEcho := serveEcho(mustListen(t, "127.0.0.1:0"))
	t.Cleanup(directEcho.close)
	configs := []*config{{name: "direct 127.0.0.1", addr: startFloor(t, nil, "127.0.0.1:0"), probe: directEcho.addr()}}
	n := newTestNetwork(t, Profile{})
	h := addHost(t, n, "floor", nil)
	addr := startFloor(t, h, h.Addr(7000))
	probe, err := n.zero.echoAddr()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Profile{{}, Rack, AZ} {
		configs = append(configs, &config{name: "line " + p.String(), n: n, profile: p, addr: addr, probe: probe})
	}
	for range rounds {
		for _, c := range configs {
			var before Stats
			if c.n != nil {
				if err := c.n.Hosts()[0].SetProfile(t.Context(), c.profile); err != nil {
					t.Fatal(err)
				}
				var err error
				if before, err = c.n.Stats(); err != nil {
					t.Fatal(err)
				}
			}
			r := shortConnections(t.Context(), c.addr, c.probe, workers, 0, d)
			c.results = append(c.results, r)
			if c.n != nil {
				after, err := c.n.Stats()
				if err != nil {
					t.Fatal(err)
				}
				c.stats = append(c.stats, after.Sub(before))
			}
		}
	}
	median := func(c *config, f func(loadResult) float64) float64 {
		v := make([]float64, len(c.results))
		for i, r := range c.results {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	for _, c := range configs {
		t.Logf("%-18s %6.0f cycles/s, cycle p50 %6.0f µs; probe rtt p50 %6.0f µs p90 %6.0f µs (medians of %d rounds)", c.name,
			median(c, loadResult.perSecond), median(c, func(r loadResult) float64 { return us(r.p50) }),
			median(c, func(r loadResult) float64 { return us(r.probe.P50) }), median(c, func(r loadResult) float64 { return us(r.probe.P90) }), rounds)
		if c.n == nil {
			continue
		}
		var sum Stats
		for _, s := range c.stats {
			sum.Elapsed += s.Elapsed
			sum.CPU += s.CPU
			sum.Packets += s.Packets
			sum.Dropped.Queue += s.Dropped.Queue
			sum.Dropped.WriteErr += s.Dropped.WriteErr
			sum.KernelDrops += s.KernelDrops
			sum.LateP99 = max(sum.LateP99, s.LateP99)
		}
		t.Logf("%-18s line: %.0f packets/s, %.2f cores, %.1f µs CPU/packet, late p99 ≤ %v, kernel drops %d",
			"", sum.PacketsPerSecond(), sum.CPUCores(), sum.CPU.Seconds()*1e6/float64(max(sum.Packets, 1)), sum.LateP99, sum.KernelDrops)
		if sum.Dropped.Queue != 0 || sum.Dropped.WriteErr != 0 {
			t.Errorf("%s dropped packets under load: %+v", c.name, sum.Dropped)
		}
		low := 2 * c.n.Floor(c.profile)
		for _, r := range c.results {
			if r.cycles > 0 && r.p50 < low {
				t.Errorf("%s: cycle p50 %v below the physics bound %v", c.name, r.p50, low)
			}
		}
	}
}

func mustListen(t *testing.T, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
