package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/monolock"
)

const usageRun = `usage: monolockctl run [flags] NAME [--] CMD [ARGS...]

Waits for the lock NAME, runs CMD while holding it, and releases it when
CMD exits. CMD gets MONOLOCK_LOCK (the name) and MONOLOCK_TOKEN (the
fencing token, decimal) in its environment; pass the token to whatever it
writes so a stale holder can be rejected.

CMD runs in its own process group, so that a lost lock stops all of it
(as a background group it cannot read from the terminal). If the lock is
lost while CMD runs, the group gets SIGTERM, and SIGKILL after -grace.
SIGINT, SIGTERM and SIGHUP sent to monolockctl are forwarded to the group
while CMD runs; before, they give up the wait. Flags go before NAME.

Exit status:
  CMD's status    CMD ran to its end while the lock was held
                  (128+N if CMD was killed by signal N)
  75              lock not obtained: -wait expired, the server was
                  unreachable or refused the lock
  76              lock lost while CMD ran; CMD was stopped
  126, 127        CMD could not be started (127: not found)
  2               bad flags or arguments
  128+N           monolockctl got signal N while waiting for the lock

Flags:
`

// runConfig is the parsed "run" invocation.
type runConfig struct {
	addr  string
	lease time.Duration
	wait  time.Duration
	grace time.Duration
	tls   tlsFlags
	name  string
	argv  []string
}

type tlsFlags struct {
	on         bool
	ca         string
	cert, key  string
	serverName string
}

func runCommand(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usageRun); fs.PrintDefaults() }
	var rc runConfig
	fs.StringVar(&rc.addr, "addr", envOr(getenv, "MONOLOCK_ADDR", "127.0.0.1:7070"), "server `host:port` (env MONOLOCK_ADDR)")
	fs.DurationVar(&rc.lease, "lease", 2*time.Second, "lease: how long the server tolerates silence before it ends the session (not a hold limit)")
	fs.DurationVar(&rc.wait, "wait", 30*time.Second, "how long to wait for the lock; 0 waits without limit")
	fs.DurationVar(&rc.grace, "grace", 10*time.Second, "time between SIGTERM and SIGKILL when the lock is lost")
	fs.BoolVar(&rc.tls.on, "tls", false, "connect with TLS, verifying the server against the system roots (implied by the other -tls flags)")
	fs.StringVar(&rc.tls.ca, "tls-ca", "", "PEM `file` of the CA that signed the server's certificate")
	fs.StringVar(&rc.tls.cert, "tls-cert", "", "client certificate PEM `file` for mTLS (with -tls-key)")
	fs.StringVar(&rc.tls.key, "tls-key", "", "client key PEM `file` for mTLS (with -tls-cert)")
	fs.StringVar(&rc.tls.serverName, "tls-server-name", "", "server name to verify (default: the host of -addr)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return usageError(fs, "missing lock NAME")
	}
	rc.name, rest = rest[0], rest[1:]
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return usageError(fs, "missing CMD to run")
	}
	rc.argv = rest
	switch {
	case rc.addr == "":
		return usageError(fs, "-addr is empty; want the server's host:port")
	case rc.lease <= 0:
		return usageError(fs, "-lease must be positive, got %v", rc.lease)
	case rc.wait < 0:
		return usageError(fs, "-wait must not be negative, got %v", rc.wait)
	case rc.grace < 0:
		return usageError(fs, "-grace must not be negative, got %v", rc.grace)
	case (rc.tls.cert == "") != (rc.tls.key == ""):
		return usageError(fs, "-tls-cert and -tls-key go together")
	}
	dialer, err := rc.tls.dialer(rc.addr)
	if err != nil {
		fmt.Fprintf(stderr, "monolockctl run: %v\n", err)
		return exitUsage
	}
	client := monolock.New(monolock.Config{Address: rc.addr, Dialer: dialer})
	return rc.run(client, stdin, stdout, stderr)
}

// dialer returns nil (plaintext TCP) or a *tls.Dialer.
func (t tlsFlags) dialer(addr string) (monolock.Dialer, error) {
	if !t.on && t.ca == "" && t.cert == "" {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: t.serverName, MinVersion: tls.VersionTLS12}
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("-addr %q: %w", addr, err)
		}
		cfg.ServerName = host
	}
	if t.ca != "" {
		pem, err := os.ReadFile(t.ca)
		if err != nil {
			return nil, fmt.Errorf("-tls-ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-tls-ca %s: no PEM certificate in it", t.ca)
		}
	}
	if t.cert != "" {
		cert, err := tls.LoadX509KeyPair(t.cert, t.key)
		if err != nil {
			return nil, fmt.Errorf("-tls-cert/-tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return &tls.Dialer{Config: cfg}, nil
}

// run waits for the lock, then runs the command under it.
func (rc *runConfig) run(client *monolock.Client, stdin io.Reader, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	lock, code := rc.acquire(client, sigs, stderr)
	if lock == nil {
		return code
	}
	defer lock.Release()

	cmd := exec.Command(rc.argv[0], rc.argv[1:]...)
	cmd.Env = append(os.Environ(),
		"MONOLOCK_LOCK="+rc.name,
		"MONOLOCK_TOKEN="+strconv.FormatUint(lock.Token(), 10))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "monolockctl run: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return exitNotFound
		}
		return exitCannotRun
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	group := -cmd.Process.Pid // the command's process group

	for {
		select {
		case err := <-exited:
			return exitStatus(err, stderr)
		case s := <-sigs:
			syscall.Kill(group, s.(syscall.Signal))
		case <-lock.Done():
			fmt.Fprintf(stderr, "monolockctl run: lock %q lost: %v; stopping the command\n", rc.name, lock.Err())
			rc.stop(group, exited, stderr)
			return exitLost
		}
	}
}

// acquire waits for the lock for at most -wait, giving up on a signal.
// It returns the lock, or nil and the exit code.
func (rc *runConfig) acquire(client *monolock.Client, sigs <-chan os.Signal, stderr io.Writer) (*monolock.Lock, int) {
	ctx, cancel := context.WithCancel(context.Background())
	if rc.wait > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), rc.wait)
	}
	defer cancel()
	type result struct {
		lock *monolock.Lock
		err  error
	}
	done := make(chan result, 1)
	go func() {
		l, err := client.Acquire(ctx, rc.name, rc.lease)
		done <- result{l, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			if errors.Is(r.err, context.DeadlineExceeded) {
				r.err = fmt.Errorf("not granted within -wait %v", rc.wait)
			}
			fmt.Fprintf(stderr, "monolockctl run: lock %q not obtained: %v\n", rc.name, r.err)
			return nil, exitNotObtained
		}
		return r.lock, 0
	case s := <-sigs:
		cancel()
		if r := <-done; r.lock != nil {
			r.lock.Release()
		}
		fmt.Fprintf(stderr, "monolockctl run: %v while waiting for lock %q\n", s, rc.name)
		return nil, 128 + int(s.(syscall.Signal))
	}
}

// stop ends the command's process group: SIGTERM, then SIGKILL after the
// grace period, and waits for the command to exit.
func (rc *runConfig) stop(group int, exited <-chan error, stderr io.Writer) {
	syscall.Kill(group, syscall.SIGTERM)
	t := time.NewTimer(rc.grace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		fmt.Fprintf(stderr, "monolockctl run: command still running %v after SIGTERM; sending SIGKILL\n", rc.grace)
		syscall.Kill(group, syscall.SIGKILL)
		<-exited
	}
	// Whatever else of the group survived its leader goes too.
	syscall.Kill(group, syscall.SIGKILL)
}

// exitStatus maps the command's Wait result to our exit code.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(stderr, "monolockctl run: %v\n", err)
	return exitFailure
}
