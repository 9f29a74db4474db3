package nemesis

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/backend/local"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/faultproxy"
)

// childEnv makes the test binary an echo child: every line on stdin is
// written back on stdout.
const childEnv = "MONOLOCK_BENCH_NEMESIS_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Println(sc.Text())
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The fault proxy's links can drop one direction: partitions run.
var _ OneWayLink = (*faultproxy.Link)(nil)

// probeTimeout is how long a probe waits for an answer that a fault
// should stop: long against a loopback round trip, short against the
// fault.
const probeTimeout = 300 * time.Millisecond

// pingRedis sends PING on a new connection to addr and waits up to
// timeout for PONG.
func pingRedis(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, "*1\r\n$4\r\nPING\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("answer %q", line)
	}
	return nil
}

// TestExecutorRealProcesses runs a schedule against a real client process
// (SIGSTOP/SIGCONT), its real fault-proxy link to a real redis-server
// (host loss; a partition when the link can drop one direction), and
// that redis-server (pause, kill and restart), and shows with probes
// during and after each fault that it really happened and really ended.
func TestExecutorRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fault schedule on real processes: not under -short (make test runs it)")
	}
	redisBin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	addr, err := local.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr)
	srv, err := local.StartProcess(ctx, "redis", addr, redisBin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe)
	child.Env = append(os.Environ(), childEnv+"=1")
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	echoes := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			echoes <- sc.Text()
		}
		close(echoes)
	}()
	defer func() {
		_ = child.Process.Signal(syscall.SIGCONT)
		stdin.Close()
		for range echoes {
		}
		_ = child.Wait()
	}()
	echo := func(msg string, timeout time.Duration) error {
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			return err
		}
		select {
		case got := <-echoes:
			if got != msg {
				return fmt.Errorf("echo %q, want %q", got, msg)
			}
			return nil
		case <-time.After(timeout):
			return fmt.Errorf("no echo of %q within %v", msg, timeout)
		}
	}

	proxy := faultproxy.New()
	defer proxy.Close()
	link, err := proxy.Link("c1->redis", addr)
	if err != nil {
		t.Fatal(err)
	}
	// Everything answers before the faults: a failed probe later is the
	// fault's doing.
	if err := echo("hello", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := pingRedis(link.Addr(), 5*time.Second); err != nil {
		t.Fatal(err)
	}

	_, oneWay := any(link).(OneWayLink)
	s := Schedule{Faults: []Fault{
		{ID: 1, Kind: ClientPause, Start: 0, Duration: time.Second, Client: 1},
		{ID: 2, Kind: ClientHostLoss, Start: 1500 * time.Millisecond, Duration: time.Second, Client: 1},
		{ID: 3, Kind: ClientPartition, Start: 3 * time.Second, Duration: time.Second, Client: 1, Direction: FromServer},
		{ID: 4, Kind: ServerPause, Start: 4500 * time.Millisecond, Duration: time.Second, Server: 1},
		{ID: 5, Kind: ServerKill, Start: 6 * time.Second, Duration: 500 * time.Millisecond, Server: 1},
	}}
	pid := child.Process.Pid
	var mu sync.Mutex // faults here never overlap, but each runs on its own goroutine
	probes := map[string]bool{}
	observe := func(ev check.Event) {
		mu.Lock()
		defer mu.Unlock()
		key := fmt.Sprintf("%s %d", ev.Type, ev.ID)
		probes[key] = true
		var err error
		if ev.AckT != nil && ev.Fault.Kind != string(ClientPause) {
			t.Errorf("%s (%s) carries ack_t", key, ev.Fault.Kind)
		}
		switch key {
		case "start 1":
			// The client was seen stopped, after SIGSTOP was sent.
			if ev.AckT == nil || *ev.AckT < ev.T {
				t.Errorf("pause start at %d seen stopped at %v, want a time not before it", ev.T, ev.AckT)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				state, serr := processState(pid)
				if serr != nil || state == 'T' {
					err = serr
					break
				}
				if time.Now().After(deadline) {
					err = fmt.Errorf("client state %c, not stopped", state)
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err == nil && echo("during the pause", probeTimeout) == nil {
				err = fmt.Errorf("a paused client answered")
			}
		case "end 1":
			if ev.AckT == nil || *ev.AckT < ev.T {
				t.Errorf("pause end at %d seen running at %v, want a time not before it", ev.T, ev.AckT)
			}
			// The line sent during the pause is answered once it runs.
			select {
			case got := <-echoes:
				if got != "during the pause" {
					err = fmt.Errorf("echo %q after the pause", got)
				}
			case <-time.After(10 * time.Second):
				err = fmt.Errorf("the resumed client did not answer")
			}
		case "start 2", "start 3":
			if pingRedis(link.Addr(), probeTimeout) == nil {
				err = fmt.Errorf("redis answered through a silent link")
			}
		case "end 2", "end 3", "end 4", "end 5":
			err = pingRedis(addr, 10*time.Second)
			if err == nil && ev.ID <= 3 {
				err = pingRedis(link.Addr(), 10*time.Second)
			}
		case "skip 3":
			if oneWay || !strings.Contains(ev.Error, "one direction") {
				err = fmt.Errorf("partition skipped (%s) by a link that can drop one direction=%v", ev.Error, oneWay)
			}
		case "start 4":
			if pingRedis(addr, probeTimeout) == nil {
				err = fmt.Errorf("a paused redis answered")
			}
		case "start 5":
			if perr := pingRedis(addr, probeTimeout); perr == nil || !strings.Contains(perr.Error(), "refused") {
				err = fmt.Errorf("ping of a killed redis: %v, want connection refused", perr)
			}
		}
		if err != nil {
			t.Errorf("%s (%s on %s): %v", key, ev.Fault.Kind, ev.Fault.Target, err)
		}
	}
	var buf bytes.Buffer
	e := &Executor{
		Targets: Targets{
			Clients: []Client{&ProcessClient{ClientName: "c1", Pid: pid, Links: []Link{link}}},
			Servers: []Server{srv},
		},
		Recorder: check.NewRecorder(&buf),
		Observe:  observe,
	}
	out, err := e.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"start 1", "end 1", "start 2", "end 2", "start 4", "end 4", "start 5", "end 5"}
	if oneWay {
		want = append(want, "start 3", "end 3")
	} else {
		want = append(want, "skip 3")
	}
	for _, k := range want {
		if !probes[k] {
			t.Errorf("no %s event", k)
		}
	}
	h, err := check.ReadHistory(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Faults) != len(want)/2 || out[4].End <= out[4].Start {
		t.Errorf("history faults %+v, outcomes %+v", h.Faults, out)
	}
}
