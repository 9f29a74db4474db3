package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// invoke runs the CLI with env as the environment and returns the exit
// code and both outputs.
func invoke(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut lockedBuffer
	code = cli(args, func(k string) string { return env[k] }, nil, &out, &errOut)
	return code, out.String(), errOut.String()
}

// lockedBuffer is written by monolockctl and by the command's output
// copier at once (a terminal or file needs no lock).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"no subcommand", nil, exitUsage, "usage: monolockctl SUBCOMMAND"},
		{"unknown subcommand", []string{"lock"}, exitUsage, `unknown subcommand "lock"`},
		{"run without name", []string{"run"}, exitUsage, "missing lock NAME"},
		{"run without command", []string{"run", "a"}, exitUsage, "missing CMD"},
		{"run without command after --", []string{"run", "a", "--"}, exitUsage, "missing CMD"},
		{"run with bad duration", []string{"run", "-lease", "2 seconds", "a", "true"}, exitUsage, `invalid value "2 seconds" for flag -lease`},
		{"run with zero lease", []string{"run", "-lease", "0s", "a", "true"}, exitUsage, "-lease must be positive"},
		{"run with negative wait", []string{"run", "-wait", "-1s", "a", "true"}, exitUsage, "-wait must not be negative"},
		{"run with cert but no key", []string{"run", "-tls-cert", "c.pem", "a", "true"}, exitUsage, "-tls-cert and -tls-key go together"},
		{"run with unreadable CA", []string{"run", "-tls-ca", "/nonexistent/ca.pem", "a", "true"}, exitUsage, "-tls-ca"},
		{"run with unknown flag", []string{"run", "-leas", "2s", "a", "true"}, exitUsage, "flag provided but not defined: -leas"},
		{"locks with two patterns", []string{"locks", "a*", "b*"}, exitUsage, "locks takes at most one MATCH"},
		{"show without name", []string{"show"}, exitUsage, "show takes one NAME"},
		{"release without name", []string{"release"}, exitUsage, "release takes one NAME"},
		{"release with empty name", []string{"release", ""}, exitUsage, "empty lock NAME"},
		{"kick without remote address", []string{"kick", "a"}, exitUsage, "kick takes NAME and REMOTE_ADDR"},
		{"bad admin address", []string{"locks", "-admin", "ftp://x"}, exitUsage, "neither host:port nor an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := invoke(t, nil, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"run", "-h"}, {"locks", "-h"}, {"kick", "-help"}} {
		code, stdout, stderr := invoke(t, nil, args...)
		if code != exitOK || !strings.Contains(stdout+stderr, "usage: monolockctl") {
			t.Errorf("%v: exit %d, output %q", args, code, stdout+stderr)
		}
	}
	// The run help documents the exit codes and the environment.
	_, _, stderr := invoke(t, nil, "run", "-h")
	for _, want := range []string{"75", "76", "MONOLOCK_TOKEN", "MONOLOCK_LOCK", "MONOLOCK_ADDR", "SIGKILL"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("run -h does not mention %s", want)
		}
	}
}
