package clockshift

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"
)

// probeC prints, for each line read on stdin, the clocks the interposer
// overrides and one it must not touch, in nanoseconds: CLOCK_REALTIME,
// CLOCK_REALTIME_COARSE, gettimeofday, time, CLOCK_MONOTONIC.
const probeC = `#include <stdio.h>
#include <sys/time.h>
#include <time.h>
static long long ns(struct timespec t) { return t.tv_sec * 1000000000LL + t.tv_nsec; }
int main(void) {
	char line[16];
	while (fgets(line, sizeof line, stdin)) {
		struct timespec rt, co, mo; struct timeval tv;
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_REALTIME_COARSE, &co);
		gettimeofday(&tv, NULL);
		time_t t = time(NULL);
		clock_gettime(CLOCK_MONOTONIC, &mo);
		printf("%lld %lld %lld %lld %lld\n", ns(rt), ns(co), tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL, t * 1000000000LL, ns(mo));
		fflush(stdout);
	}
	return 0;
}
`

// slack bounds the difference between the probe's clocks and the test's
// own (unshifted) reading taken around them: generous, for a loaded
// machine; the offsets used are much larger.
const slack = 5 * time.Second

func newShift(t *testing.T) *Shift {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil && os.Getenv("CC") == "" && os.Getenv("CI") == "" {
		t.Skip("no C compiler (apt-get install -y gcc libc6-dev); with CI set this is a failure")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := New(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type probe struct {
	in  io.WriteCloser
	out *bufio.Scanner
}

func startProbe(t *testing.T, s *Shift) *probe {
	t.Helper()
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "probe.c"), filepath.Join(dir, "probe")
	if err := os.WriteFile(src, []byte(probeC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("cc probe: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), s.Env()...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	return &probe{in: in, out: bufio.NewScanner(out)}
}

func monotonicNow() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Duration(ts.Nano())
}

// check asks the probe for its clocks and checks each against the real
// time plus want (the monotonic clock against no shift).
func (p *probe) check(t *testing.T, want time.Duration) {
	t.Helper()
	before, monoBefore := time.Now(), monotonicNow()
	if _, err := io.WriteString(p.in, "\n"); err != nil {
		t.Fatal(err)
	}
	if !p.out.Scan() {
		t.Fatalf("probe ended: %v", p.out.Err())
	}
	after, monoAfter := time.Now(), monotonicNow()
	f := strings.Fields(p.out.Text())
	if len(f) != 5 {
		t.Fatalf("probe said %q", p.out.Text())
	}
	names := []string{"CLOCK_REALTIME", "CLOCK_REALTIME_COARSE", "gettimeofday", "time"}
	for i, name := range names {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		got := time.Unix(0, v)
		// time() and the coarse clock truncate: allow them a second.
		lo, hi := before.Add(want-slack-time.Second), after.Add(want+slack)
		if got.Before(lo) || got.After(hi) {
			t.Errorf("%s with offset %s: %s, want within [%s, %s]", name, want, got.UTC(), lo.UTC(), hi.UTC())
		}
	}
	mono, _ := strconv.ParseInt(f[4], 10, 64)
	if m := time.Duration(mono); m < monoBefore-slack || m > monoAfter+slack {
		t.Errorf("CLOCK_MONOTONIC moved with the shift: %s, real [%s, %s]", m, monoBefore, monoAfter)
	}
}

// TestInterposer runs a small C program under the interposer and changes
// the offset while it runs: every wall clock follows at once, the
// monotonic clock does not, and a bad file keeps the last offset.
func TestInterposer(t *testing.T) {
	s := newShift(t)
	p := startProbe(t, s)
	p.check(t, 0)
	for _, d := range []time.Duration{time.Hour, -90 * time.Second, 20 * time.Second} {
		if err := s.Set(d); err != nil {
			t.Fatal(err)
		}
		p.check(t, d)
	}
	for _, content := range []string{"", "garbage", "12h"} {
		if err := os.WriteFile(s.File, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		p.check(t, 20*time.Second)
	}
	// The other units of the file format.
	for content, d := range map[string]time.Duration{"-1500ms": -1500 * time.Millisecond, " 3600s\n": time.Hour, "+7000000us": 7 * time.Second} {
		if err := os.WriteFile(s.File, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		p.check(t, d)
	}
}

// TestDate runs date(1) under the interposer, the tool a user would try.
func TestDate(t *testing.T) {
	s := newShift(t)
	if err := s.Set(48 * time.Hour); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("date", "+%s")
	cmd.Env = append(os.Environ(), s.Env()...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	secs, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(time.Unix(secs, 0)); d < 48*time.Hour-slack || d > 48*time.Hour+slack {
		t.Errorf("date under a 48h shift is %s ahead", d)
	}
}

// startRedis runs the host's redis-server under s on a free loopback
// port, for the tests, and returns a client for it.
func startRedis(t *testing.T, s *Shift) *redis.Client {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("redis-server not installed (apt-get install -y redis-server); with CI set this is a failure")
		}
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	cmd.Env = append(os.Environ(), s.Env()...)
	logs, err := os.Create(filepath.Join(t.TempDir(), "redis.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited; logs.Close() })

	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	t.Cleanup(func() { rdb.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return rdb
		}
		select {
		case werr := <-exited:
			exited <- werr // for the cleanup
			out, _ := os.ReadFile(logs.Name())
			t.Fatalf("redis-server under clockshift exited (%v):\n%s", werr, out)
		default:
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logs.Name())
			t.Fatalf("redis-server under clockshift did not answer: %v\n%s", err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRedisClockJump is the fault itself on a real Redis: a key set with
// PX 10000 is gone as soon as the server's clock jumps 20 s, and a second
// SET NX succeeds — two holders of one lock, with the host clock intact.
func TestRedisClockJump(t *testing.T) {
	s := newShift(t)
	rdb := startRedis(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	ok, err := rdb.SetNX(ctx, "lock", "A", 10*time.Second).Result()
	if err != nil || !ok {
		t.Fatalf("first SET NX: %v %v", ok, err)
	}
	if ok, err := rdb.SetNX(ctx, "lock", "B", 10*time.Second).Result(); err != nil || ok {
		t.Fatalf("second SET NX before the jump: %v %v, want refused", ok, err)
	}
	if err := s.Set(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(ctx, "lock").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS right after a +20s jump: %d %v, want the key gone", n, err)
	}
	if ok, err := rdb.SetNX(ctx, "lock", "B", 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("second SET NX after the jump: %v %v, want granted", ok, err)
	}
	// The server's TIME follows the shifted clock too.
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(now); d < 20*time.Second-slack || d > 20*time.Second+slack {
		t.Errorf("Redis TIME is %s ahead, want about 20s", d)
	}
}
