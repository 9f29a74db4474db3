package main

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/admin"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// wait bounds anything that should happen promptly on a busy machine.
const wait = 10 * time.Second

// buildBinary builds cmd/monolock into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	bin := filepath.Join(t.TempDir(), "monolock")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// stderrWatcher collects the process's log lines and finds values in them.
type stderrWatcher struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{}
}

func watch(t *testing.T, r io.Reader) *stderrWatcher {
	w := &stderrWatcher{more: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
			select {
			case w.more <- struct{}{}:
			default:
			}
		}
	}()
	return w
}

// find waits for a line matching re and returns its first group.
func (w *stderrWatcher) find(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.After(wait)
	seen := 0
	for {
		w.mu.Lock()
		for ; seen < len(w.lines); seen++ {
			if m := re.FindStringSubmatch(w.lines[seen]); m != nil {
				w.mu.Unlock()
				return m[len(m)-1]
			}
		}
		all := strings.Join(w.lines, "\n")
		w.mu.Unlock()
		select {
		case <-w.more:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no log line matching %s in:\n%s", re, all)
		}
	}
}

func acquireOnce(t *testing.T, addr, name string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Write(protocol.AppendAcquire(nil, 60_000, name)); err != nil {
		t.Fatal(err)
	}
	if f, err := protocol.ReadServerFrame(c); err != nil || f.Type != protocol.TypeAcquired {
		t.Fatalf("acquire %q: %+v, %v", name, f, err)
	}
}

func auditLocks(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, m["event"].(string)+" "+m["lock"].(string))
	}
	return out
}

func eventuallyEqual(t *testing.T, what string, got func() []string, want []string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		g := got()
		if strings.Join(g, "|") == strings.Join(want, "|") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: got %q, want %q", what, g, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSIGHUPReopensAuditLog runs the real binary: the audit log is renamed
// away (as logrotate does), SIGHUP makes the server write a fresh file at the
// same path, and the admin API and a graceful SIGTERM still work.
// process is a running monolock binary.
type process struct {
	cmd    *exec.Cmd
	logs   *stderrWatcher
	exited chan error
	addr   string // protocol address
}

// start runs the binary with args (flags only: no MONOLOCK_* from the
// test's environment) and stdout going to stdout, and waits until it
// listens.
func start(t *testing.T, bin string, stdout io.Writer, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = []string{}
	cmd.Stdout = stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	p.logs = watch(t, stderr)
	p.addr = p.logs.find(t, regexp.MustCompile(`msg="monolock: listening" addr=(\S+)`))
	return p
}

// stop sends SIGTERM and expects a clean exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		p.exited <- err
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("no exit after SIGTERM")
	}
}

func TestSIGHUPReopensAuditLog(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	auditPath := filepath.Join(dir, "audit.log")
	p := start(t, bin, nil, "-admin-listen", "127.0.0.1:0", "-audit-log", auditPath)
	cmd, logs, addr := p.cmd, p.logs, p.addr
	adminAddr := logs.find(t, regexp.MustCompile(`msg="monolock: admin HTTP listening" addr=(\S+)`))

	acquireOnce(t, addr, "before")
	eventuallyEqual(t, "audit before rotation", func() []string { return auditLocks(t, auditPath) }, []string{"granted before", "released before"})

	rotated := auditPath + ".1"
	if err := os.Rename(auditPath, rotated); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	logs.find(t, regexp.MustCompile(`msg="monolock: reloaded audit log"`))
	acquireOnce(t, addr, "after")
	eventuallyEqual(t, "audit after rotation", func() []string { return auditLocks(t, auditPath) }, []string{"granted after", "released after"})
	if got := auditLocks(t, rotated); strings.Join(got, "|") != "granted before|released before" {
		t.Fatalf("rotated file got %q", got)
	}

	resp, err := http.Get("http://" + adminAddr + "/api/info")
	if err != nil {
		t.Fatal(err)
	}
	var info admin.Info
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	err = dec.Decode(&info)
	resp.Body.Close()
	if err != nil || info.Config.AuditLog != auditPath || info.Config.Listen != addr {
		t.Fatalf("admin info %+v, %v", info, err)
	}

	p.stop(t)
}

// TestAuditToStdout: with -audit-log - standard output carries audit lines
// only; diagnostics stay on stderr.
func TestAuditToStdout(t *testing.T) {
	bin := buildBinary(t)
	var stdout syncBuffer
	p := start(t, bin, &stdout, "-audit-log", "-", "-log-level", "debug", "-log-format", "text")
	acquireOnce(t, p.addr, "x")
	p.stop(t)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout:\n%s", stdout.String())
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["lock"] != "x" {
			t.Fatalf("stdout line %q is not an audit line: %v", l, err)
		}
	}
}

func TestWarnIfExposed(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}, false},
		{&net.TCPAddr{IP: net.IPv4(127, 1, 2, 3), Port: 9}, false},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9}, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 9}, true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 9}, true},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 9}, true},
		{&net.UnixAddr{Name: "/tmp/x", Net: "unix"}, true},
	}
	for _, tt := range tests {
		var logs syncBuffer
		got := warnIfExposed(slog.New(slog.NewTextHandler(&logs, nil)), tt.addr)
		if got != tt.want || strings.Contains(logs.String(), "WARN") != tt.want {
			t.Errorf("warnIfExposed(%v) = %v, log %q; want %v", tt.addr, got, logs.String(), tt.want)
		}
	}
}

// TestOpsFilesReachTheServer checks the wiring of each file flag: a missing
// file is a startup failure (exit 1) whose message names that file.
func TestOpsFilesReachTheServer(t *testing.T) {
	dir := t.TempDir()
	missing := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"tls cert", []string{"-tls-cert", missing("server.crt"), "-tls-key", missing("server.key")}, "server.crt"},
		{"audit log", []string{"-audit-log", filepath.Join(missing("no-dir"), "audit.log")}, "no-dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr syncBuffer
			args := append([]string{"-listen", "127.0.0.1:0"}, tt.args...)
			if code := run(t.Context(), func() {}, args, func(string) string { return "" }, io.Discard, &stderr); code != 1 {
				t.Fatalf("exit %d, want 1; log:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("log does not name %s:\n%s", tt.want, stderr.String())
			}
		})
	}
}
