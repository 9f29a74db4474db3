package sessions_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/load/sessions"
	"github.com/monolock/monolock-bench/bench/load/spreaddial"
	monolockclient "github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/redisbench"
)

// The measurement at small C: real servers as child processes, real
// clients, 1,000 idle holders at lease 30 s. Sessions start spread over one
// heartbeat (or watchdog) interval, so the rate measured in the window
// after the ramp is the steady one, whatever the window's phase.
const (
	scaleC      = 1000
	scaleLease  = 30 * time.Second
	scaleWindow = 4 * time.Second
	// scaleReserve is files kept aside in each process beyond sessions.
	scaleReserve = sessions.DefaultReserve
)

// scaleResult is what the measurement prints, as results.json would hold it.
type scaleResult struct {
	Contender       string             `json:"contender"`
	Sessions        int                `json:"sessions"`
	LeaseSeconds    float64            `json:"lease_s"`
	Empty           bench.Footprint    `json:"empty"`
	AtC             bench.Footprint    `json:"at_c"`
	AnonPerSession  float64            `json:"anon_bytes_per_session"`
	TotalPerSession float64            `json:"total_bytes_per_session"`
	AnonSlope       sessions.Line      `json:"anon_slope"`
	Rate            float64            `json:"rate_per_s"`
	RateName        string             `json:"rate_name"`
	CPUPerSecond    float64            `json:"server_cpu_s_per_s"`
	OpenTime        time.Duration      `json:"open_ns"`
	Extra           map[string]float64 `json:"extra,omitempty"`
	Limits          []bench.FileLimits `json:"file_limits"`
	Ports           *spreaddial.Plan   `json:"ports,omitempty"`
}

func (r scaleResult) log(t *testing.T) {
	t.Helper()
	t.Logf("%s at C=%d, lease %v: %.0f B/session anon (%.0f B total RSS), slope %.0f B/session (R² %.3f over %d points); %s %.1f/s; server CPU %.4f s/s; opened in %v",
		r.Contender, r.Sessions, scaleLease, r.AnonPerSession, r.TotalPerSession, r.AnonSlope.Slope, r.AnonSlope.R2, r.AnonSlope.N, r.RateName, r.Rate, r.CPUPerSecond, r.OpenTime.Round(time.Millisecond))
	b, _ := json.Marshal(r)
	t.Logf("json: %s", b)
}

// checkLimits raises this process's open-file limit and skips the test,
// with the reason, when C sessions cannot fit in it.
func checkLimits(t *testing.T, filesPerSession int) bench.FileLimits {
	t.Helper()
	l, err := host.RaiseFileLimit()
	if err != nil {
		t.Logf("%v (going on with the limits in force)", err)
	}
	if err := l.Check(scaleC, filesPerSession, scaleReserve); err != nil {
		t.Skip(err)
	}
	return l
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startChild starts a server process that dies with the test.
func startChild(t *testing.T, path string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(path, args...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(path), out)
		}
	})
	return cmd
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s after 15s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sampler collects (sessions, anon bytes) points as sessions open.
type sampler struct {
	pid    int
	points []sessions.Point
	err    error
}

func (s *sampler) progress(p sessions.Progress) {
	m, err := host.ProcessFootprint(s.pid)
	if err != nil {
		s.err = err
		return
	}
	s.points = append(s.points, sessions.Point{X: float64(p.Held), Y: float64(m.Anon)})
}

func TestScaleIdleHolders(t *testing.T) {
	if testing.Short() {
		t.Skip("a ~20 s measurement with real servers; skipped in -short")
	}
	t.Run("monolock", func(t *testing.T) { t.Parallel(); measureMonolock(t) })
	t.Run("redis", func(t *testing.T) { t.Parallel(); measureRedis(t) })
}

func measureMonolock(t *testing.T) {
	client := checkLimits(t, 1) // the server is another process
	bin := filepath.Join(t.TempDir(), "monolock")
	build := exec.Command("go", "build", "-o", bin, "github.com/monolock/monolock-bench/cmd/monolock")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/monolock: %v\n%s", err, out)
	}
	addr, ops := freeAddr(t), freeAddr(t)
	cmd := startChild(t, bin, "-listen", addr, "-ops-listen", ops, "-log-level", "warn")
	waitFor(t, "ready", func() bool {
		r, err := http.Get("http://" + ops + "/readyz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
	pid := cmd.Process.Pid
	srvLimits, err := host.ProcessFileLimits(pid, "server")
	if err != nil {
		t.Fatal(err)
	}
	if err := srvLimits.Check(scaleC, 1, scaleReserve); err != nil {
		t.Skip(err)
	}

	// Four source addresses: far more than 1,000 connections need, to show
	// the spread works end to end.
	ports, err := spreaddial.ReadPortRange()
	if err != nil {
		t.Fatal(err)
	}
	src, _ := spreaddial.Loopback(5)
	dialer := &spreaddial.Dialer{Sources: src[1:], Timeout: 10 * time.Second}
	plan := spreaddial.NewPlan(scaleC, ports, dialer)
	if !plan.Fits {
		t.Skip(plan.Needed)
	}
	locker := monolock.New(monolockclient.Config{Address: addr, Dialer: dialer}, scaleLease)

	empty := sample(t, pid)
	smp := &sampler{pid: pid, points: []sessions.Point{{X: 0, Y: float64(empty.Anon)}}}
	set, err := sessions.Open(context.Background(), sessions.Config{
		Locker: locker, Sessions: scaleC, Concurrency: 32,
		Ramp:     scaleLease / 4, // one heartbeat interval
		Progress: smp.progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := set.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	if smp.err != nil {
		t.Fatal(smp.err)
	}
	atC := sample(t, pid)
	hb0 := metric(t, ops, "monolock_heartbeats_total")
	time.Sleep(scaleWindow)
	hb1 := metric(t, ops, "monolock_heartbeats_total")
	after := sample(t, pid)
	if held, waiting, ended := set.Counts(); held != scaleC {
		t.Fatalf("after the window: %d held, %d waiting, %d ended; want all %d held", held, waiting, ended, scaleC)
	}
	if got := metric(t, ops, "monolock_locks_held"); got != scaleC {
		t.Fatalf("server holds %v locks, want %d", got, scaleC)
	}
	_, srvPort, _ := net.SplitHostPort(addr)
	fromSources := remoteSources(t, pid, srvPort)

	fit, err := sessions.Fit(smp.points)
	if err != nil {
		t.Fatal(err)
	}
	r := scaleResult{
		Contender: "monolock", Sessions: scaleC, LeaseSeconds: scaleLease.Seconds(),
		Empty: empty, AtC: atC,
		AnonPerSession:  sessions.PerSession(empty.Anon, atC.Anon, scaleC),
		TotalPerSession: sessions.PerSession(empty.Total, atC.Total, scaleC),
		AnonSlope:       fit,
		Rate:            (hb1 - hb0) / scaleWindow.Seconds(), RateName: "heartbeats",
		CPUPerSecond: (after.CPU - atC.CPU).Seconds() / scaleWindow.Seconds(),
		OpenTime:     set.OpenTime(),
		Extra:        map[string]float64{"expected_heartbeats_per_s": scaleC / (scaleLease / 4).Seconds()},
		Limits:       []bench.FileLimits{client, srvLimits},
		Ports:        &plan,
	}
	for a, n := range fromSources {
		r.Extra["conns_from_"+a] = float64(n)
	}
	r.log(t)
	for _, a := range dialer.Sources {
		if fromSources[a.String()] < scaleC/len(dialer.Sources)-1 {
			t.Errorf("the server has %d connections from %v, want ~%d: %v", fromSources[a.String()], a, scaleC/len(dialer.Sources), fromSources)
		}
	}
	if r.Rate <= 0 {
		t.Errorf("no heartbeats in %v", scaleWindow)
	}
}

// remoteSources counts the established connections to port by peer
// address, from /proc/<pid>/net/tcp: the kernel's view of the server's
// side (the table is the network namespace's, hence the port filter).
func remoteSources(t *testing.T, pid int, port string) map[string]int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 4 || fl[3] != "01" { // 01: ESTABLISHED
			continue
		}
		if _, lp, _ := strings.Cut(fl[1], ":"); !strings.EqualFold(lp, fmt.Sprintf("%04X", atoi(port))) {
			continue
		}
		h, _, _ := strings.Cut(fl[2], ":")
		v, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			continue
		}
		// Little-endian hex of the IPv4 address.
		out[fmt.Sprintf("%d.%d.%d.%d", byte(v), byte(v>>8), byte(v>>16), byte(v>>24))]++
	}
	return out
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func sample(t *testing.T, pid int) bench.Footprint {
	t.Helper()
	s, err := host.ProcessFootprint(pid)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// metric reads one unlabelled sample from the server's /metrics.
func metric(t *testing.T, ops, name string) float64 {
	t.Helper()
	r, err := http.Get("http://" + ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

func measureRedis(t *testing.T) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not on PATH (CI installs it)")
		}
		t.Skip("redis-server not on PATH: apt-get install -y redis-server")
	}
	client := checkLimits(t, 0) // 1,000 keys share go-redis's pool
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := startChild(t, path, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--loglevel", "warning", "--logfile", "")
	rc := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	defer rc.Close()
	ctx := context.Background()
	waitFor(t, "answering PING", func() bool { return rc.Ping(ctx).Err() == nil })
	pid := cmd.Process.Pid
	srvLimits, err := host.ProcessFileLimits(pid, "server")
	if err != nil {
		t.Fatal(err)
	}

	locker, err := redisbench.NewRedis(redisbench.Config{Addr: addr, TTL: scaleLease})
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	empty, usedEmpty := sample(t, pid), info(t, rc, "memory", "used_memory")
	smp := &sampler{pid: pid, points: []sessions.Point{{X: 0, Y: float64(empty.Anon)}}}
	set, err := sessions.Open(ctx, sessions.Config{
		Locker: locker, Sessions: scaleC, Concurrency: 32,
		Ramp:     scaleLease / 3, // one watchdog interval
		Progress: smp.progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := set.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	atC, usedAtC := sample(t, pid), info(t, rc, "memory", "used_memory")
	cmd0, eval0 := info(t, rc, "stats", "total_commands_processed"), calls(t, rc, "evalsha")
	time.Sleep(scaleWindow)
	// Redis 7 counts the commands a script runs too: each watchdog
	// extension is 3 (EVALSHA, GET, PEXPIRE). The INFO calls of the
	// window are taken out.
	cmds := info(t, rc, "stats", "total_commands_processed") - cmd0 - 2
	evals := calls(t, rc, "evalsha") - eval0
	after := sample(t, pid)
	if held, waiting, ended := set.Counts(); held != scaleC {
		t.Fatalf("after the window: %d held, %d waiting, %d ended; want all %d held", held, waiting, ended, scaleC)
	}
	if n := rc.DBSize(ctx).Val(); n != scaleC {
		t.Fatalf("DBSIZE %d, want %d", n, scaleC)
	}
	fit, err := sessions.Fit(smp.points)
	if err != nil {
		t.Fatal(err)
	}
	r := scaleResult{
		Contender: "redis", Sessions: scaleC, LeaseSeconds: scaleLease.Seconds(),
		Empty: empty, AtC: atC,
		AnonPerSession:  sessions.PerSession(empty.Anon, atC.Anon, scaleC),
		TotalPerSession: sessions.PerSession(empty.Total, atC.Total, scaleC),
		AnonSlope:       fit,
		Rate:            cmds / scaleWindow.Seconds(), RateName: "commands",
		CPUPerSecond: (after.CPU - atC.CPU).Seconds() / scaleWindow.Seconds(),
		OpenTime:     set.OpenTime(),
		Extra: map[string]float64{
			"used_memory_bytes_per_key": sessions.PerSession(uint64(usedEmpty), uint64(usedAtC), scaleC),
			"evalsha_per_s":             evals / scaleWindow.Seconds(),
			"expected_evalsha_per_s":    scaleC / (scaleLease / 3).Seconds(),
		},
		Limits: []bench.FileLimits{client, srvLimits},
	}
	r.log(t)
	if r.Rate <= 0 {
		t.Errorf("no commands in %v", scaleWindow)
	}
}

// calls reads the calls of one command from INFO commandstats.
func calls(t *testing.T, rc *redis.Client, command string) float64 {
	t.Helper()
	s, err := rc.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(s) {
		if v, ok := strings.CutPrefix(line, "cmdstat_"+command+":calls="); ok {
			n, _, _ := strings.Cut(v, ",")
			f, err := strconv.ParseFloat(n, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return 0
}

// info reads one numeric field of a Redis INFO section.
func info(t *testing.T, rc *redis.Client, section, field string) float64 {
	t.Helper()
	s, err := rc.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(s) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s in INFO %s", field, section)
	return 0
}
