package main

import (
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

// waitFile waits for path to exist and returns its trimmed content.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never written", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type result struct {
	code           int
	stdout, stderr string
}

// start runs the CLI in the background.
func start(t *testing.T, env map[string]string, args ...string) <-chan result {
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := invoke(t, env, args...)
		done <- result{code, stdout, stderr}
	}()
	return done
}

func await(t *testing.T, done <-chan result, within time.Duration) result {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(within):
		t.Fatalf("monolockctl still running after %v", within)
		return result{}
	}
}

// heartbeats is the server's count of heartbeats received.
func heartbeats(t *testing.T, srv *monolocktest.Server) int {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.Server().OpsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "monolock_heartbeats_total "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("monolock_heartbeats_total not exported")
	return 0
}

// The lock is held while the command runs; the command sees the name and
// the token; its exit status is ours; -addr defaults to MONOLOCK_ADDR.
func TestRunHoldsLockWhileCommandRuns(t *testing.T) {
	srv := monolocktest.NewServer(t)
	dir := t.TempDir()
	out, proceed := filepath.Join(dir, "env"), filepath.Join(dir, "go")
	// The lease is long against the stalls of a loaded machine (the
	// client gives up after 0.8 × lease without an answer); this test
	// runs in real time, a command's process cannot be in a bubble.
	const lease = 3 * time.Second
	done := start(t, map[string]string{"MONOLOCK_ADDR": srv.Addr},
		"run", "-lease", lease.String(), "deploy/prod", "--",
		"sh", "-c", `echo "$MONOLOCK_LOCK $MONOLOCK_TOKEN" > "$1"; while [ ! -e "$2" ]; do sleep 0.02; done; exit 3`, "sh", out, proceed)

	fields := strings.Fields(waitFile(t, out))
	if len(fields) != 2 || fields[0] != "deploy/prod" {
		t.Fatalf("command saw %q, want the lock name and a token", fields)
	}
	token, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	holder := func() uint64 {
		info, ok := srv.Server().Lock("deploy/prod")
		if !ok || info.Holder == nil {
			return 0
		}
		return info.Holder.Token
	}
	if got := holder(); got != token {
		t.Fatalf("server's holder has token %d, want %d", got, token)
	}
	// Held past its lease: heartbeats (one every lease/4) keep it. Five
	// of them span 1.25 leases.
	deadline := time.Now().Add(4 * lease)
	for heartbeats(t, srv) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("%d heartbeats from monolockctl in %v, want 5", heartbeats(t, srv), 4*lease)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := holder(); got != token {
		t.Fatalf("after 5 heartbeats the server's holder has token %d, want %d", got, token)
	}
	c := monolock.New(monolock.Config{Address: srv.Addr})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if l, err := c.Acquire(ctx, "deploy/prod", time.Second); err == nil {
		l.Release()
		t.Fatal("another client got the lock while the command ran")
	}
	if err := os.WriteFile(proceed, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := await(t, done, 10*time.Second)
	if r.code != 3 {
		t.Fatalf("exit %d, want the command's 3; stderr:\n%s", r.code, r.stderr)
	}
	// Released on exit.
	l, err := c.Acquire(t.Context(), "deploy/prod", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if l.Token() <= token {
		t.Errorf("next token %d not above %d", l.Token(), token)
	}
	l.Release()
}

// A force-release stops the command at once (SIGTERM) and exits 76, be it
// through the server's method or through "monolockctl release".
func TestRunStopsCommandWhenLockLost(t *testing.T) {
	tests := []struct {
		name    string
		release func(t *testing.T, srv *monolocktest.Server)
	}{
		{"Server.ForceRelease", func(t *testing.T, srv *monolocktest.Server) {
			if _, err := srv.Server().ForceRelease("job"); err != nil {
				t.Fatal(err)
			}
		}},
		{"monolockctl release", func(t *testing.T, srv *monolocktest.Server) {
			api := httptest.NewServer(srv.Server().AdminHandler())
			defer api.Close()
			if code, _, stderr := invoke(t, nil, "release", "-admin", api.URL, "job"); code != 0 {
				t.Fatalf("release: exit %d: %s", code, stderr)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := monolocktest.NewServer(t)
			started := filepath.Join(t.TempDir(), "started")
			done := start(t, nil, "run", "-addr", srv.Addr, "-grace", "8s", "job",
				"sh", "-c", `echo up > "$1"; exec sleep 60`, "sh", started)
			waitFile(t, started)
			lost := time.Now()
			tt.release(t, srv)
			r := await(t, done, 7*time.Second) // before -grace: SIGTERM did it
			if r.code != exitLost {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitLost, r.stderr)
			}
			if !strings.Contains(r.stderr, `lock "job" lost`) || strings.Contains(r.stderr, "SIGKILL") {
				t.Errorf("stderr:\n%s", r.stderr)
			}
			t.Logf("command stopped %v after the force-release", time.Since(lost).Round(time.Millisecond))
		})
	}
}

// A command that ignores SIGTERM is killed after -grace.
func TestRunKillsAfterGrace(t *testing.T) {
	srv := monolocktest.NewServer(t)
	started := filepath.Join(t.TempDir(), "started")
	done := start(t, nil, "run", "-addr", srv.Addr, "-grace", "300ms", "job",
		"sh", "-c", `trap "" TERM; echo up > "$1"; sleep 60; echo survived`, "sh", started)
	waitFile(t, started)
	lost := time.Now()
	if _, err := srv.Server().ForceRelease("job"); err != nil {
		t.Fatal(err)
	}
	r := await(t, done, 10*time.Second)
	if r.code != exitLost || !strings.Contains(r.stderr, "sending SIGKILL") || strings.Contains(r.stdout, "survived") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if d := time.Since(lost); d < 300*time.Millisecond {
		t.Fatalf("killed after %v, before the 300ms grace", d)
	}
}

// Signals sent to monolockctl while the command runs are forwarded to it.
func TestRunForwardsSignals(t *testing.T) {
	srv := monolocktest.NewServer(t)
	started := filepath.Join(t.TempDir(), "started")
	done := start(t, nil, "run", "-addr", srv.Addr, "job",
		"sh", "-c", `trap "exit 9" TERM; echo up > "$1"; while :; do sleep 0.05; done`, "sh", started)
	waitFile(t, started) // monolockctl is running the command: it handles SIGTERM
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := await(t, done, 10*time.Second); r.code != 9 {
		t.Fatalf("exit %d, want 9 from the command's trap; stderr:\n%s", r.code, r.stderr)
	}
}

func TestRunExitCodes(t *testing.T) {
	srv := monolocktest.NewServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	c := monolock.New(monolock.Config{Address: srv.Addr})
	held, err := c.Acquire(t.Context(), "busy", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"success", []string{"-addr", srv.Addr, "a", "true"}, 0, ""},
		{"command's status", []string{"-addr", srv.Addr, "a", "sh", "-c", "exit 42"}, 42, ""},
		{"command killed by a signal", []string{"-addr", srv.Addr, "a", "sh", "-c", "kill -9 $$"}, 128 + 9, ""},
		{"command not found", []string{"-addr", srv.Addr, "a", "/nonexistent/cmd"}, exitNotFound, "no such file"},
		{"wait expires", []string{"-addr", srv.Addr, "-wait", "200ms", "busy", "true"}, exitNotObtained, "not granted within -wait 200ms"},
		{"server unreachable", []string{"-addr", closed, "a", "true"}, exitNotObtained, "connection refused"},
		{"invalid name", []string{"-addr", srv.Addr, strings.Repeat("n", 256), "true"}, exitNotObtained, "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := invoke(t, nil, append([]string{"run"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

// A signal while waiting gives up the wait (leaving the queue) and exits
// 128+N; the command never runs.
func TestRunSignalWhileWaiting(t *testing.T) {
	srv := monolocktest.NewServer(t)
	c := monolock.New(monolock.Config{Address: srv.Addr})
	held, err := c.Acquire(t.Context(), "busy", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	ran := filepath.Join(t.TempDir(), "ran")
	done := start(t, nil, "run", "-addr", srv.Addr, "-wait", "0", "busy", "touch", ran)
	deadline := time.Now().Add(10 * time.Second)
	for info, _ := srv.Server().Lock("busy"); len(info.Waiters) == 0; info, _ = srv.Server().Lock("busy") {
		if time.Now().After(deadline) {
			t.Fatal("monolockctl never queued")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Queued: monolockctl handles SIGINT now.
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := await(t, done, 10*time.Second)
	if r.code != 128+int(syscall.SIGINT) || !strings.Contains(r.stderr, "while waiting for lock") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the command ran")
	}
	for info, _ := srv.Server().Lock("busy"); len(info.Waiters) != 0; info, _ = srv.Server().Lock("busy") {
		if time.Now().After(deadline) {
			t.Fatal("monolockctl still queued after giving up")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
