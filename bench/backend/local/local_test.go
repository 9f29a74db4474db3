package local

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/network"
	"github.com/monolock/monolock-bench/bench/results"
)

// echoEnv makes the test binary an echo server on -listen: a stand-in
// server program that needs nothing installed.
const echoEnv = "MONOLOCK_BENCH_LOCAL_TEST_ECHO"

func TestMain(m *testing.M) {
	network.ChildMain() // the delay line and namespace shim of TestServersOnEmulatedHosts
	if os.Getenv(echoEnv) == "1" {
		fs := flag.NewFlagSet("echo", flag.ExitOnError)
		listen := fs.String("listen", "", "")
		fs.Parse(os.Args[1:])
		l, err := net.Listen("tcp", *listen)
		if err != nil {
			os.Exit(1)
		}
		for {
			c, err := l.Accept()
			if err != nil {
				os.Exit(1)
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}
	os.Exit(m.Run())
}

func echoSpec(t *testing.T, replicas int) *bench.ServerSpec {
	t.Setenv(echoEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &bench.ServerSpec{
		Name: "echo", Replicas: replicas, Executable: exe,
		Args: func(a bench.ServerArgs) []string {
			if a.Dir == "" || a.Ops != "" {
				t.Errorf("args %+v: want a directory and no ops address", a)
			}
			return []string{"-listen", a.Listen}
		},
	}
}

func TestDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts, kills and restarts every contender's servers: not under -short (make test runs it)")
	}
	ctx := context.Background()
	d, err := Start(ctx, []*bench.ServerSpec{echoSpec(t, 3)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	servers := d.Servers("echo")
	if len(servers) != 3 || servers[1].Name() != "echo-2" {
		t.Fatalf("servers %v, want echo-1..echo-3", servers)
	}
	if d.Servers("other") != nil {
		t.Fatal("a spec that was not started has servers")
	}
	cpu, src, ok, err := bench.ServerCPU(ctx, servers)
	if err != nil || !ok || cpu < 0 || !strings.Contains(src, "/proc") {
		t.Fatalf("ServerCPU = %v, %q, %v, %v", cpu, src, ok, err)
	}
	var env results.Environment
	d.Describe(&env)
	if env.Backend != "local" || len(env.Servers) != 3 || env.Servers[0].Role != "echo-1" {
		t.Fatalf("Describe: backend %q, servers %+v", env.Backend, env.Servers)
	}

	// The fault operations act on the real process; Restart keeps the
	// address, as a failover scenario needs.
	s := servers[0]
	if err := s.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if echoes(s.Addr(), 300*time.Millisecond) {
		t.Fatal("a paused server answered")
	}
	if err := s.Unpause(ctx); err != nil {
		t.Fatal(err)
	}
	if !echoes(s.Addr(), 5*time.Second) {
		t.Fatal("an unpaused server does not answer")
	}
	for _, fault := range []func(context.Context) error{s.Kill, s.Stop} {
		if err := fault(ctx); err != nil {
			t.Fatal(err)
		}
		if echoes(s.Addr(), time.Second) {
			t.Fatal("a killed or stopped server answers")
		}
		if err := s.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		if !echoes(s.Addr(), 5*time.Second) {
			t.Fatal("a restarted server does not answer on its address")
		}
	}
	if err := s.Cut(ctx); !errors.Is(err, bench.ErrNotSupported) {
		t.Fatalf("Cut = %v, want ErrNotSupported", err)
	}

	addrs := bench.Addrs(servers)
	d.Close()
	d.Close() // twice is fine
	for _, a := range addrs {
		if echoes(a, time.Second) {
			t.Errorf("%s still answers after Close", a)
		}
	}
}

func TestStartWithoutExecutable(t *testing.T) {
	spec := &bench.ServerSpec{Name: "none", Executable: "no-such-server-program", Args: func(bench.ServerArgs) []string { return nil }}
	if _, err := Start(context.Background(), []*bench.ServerSpec{spec}, nil); !errors.Is(err, ErrNoExecutable) {
		t.Fatalf("Start = %v, want ErrNoExecutable", err)
	}
}

// echoes reports whether the server at addr echoes a byte within d.
func echoes(addr string, d time.Duration) bool {
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(d))
	if _, err := c.Write([]byte{'x'}); err != nil {
		return false
	}
	_, err = io.ReadFull(c, make([]byte, 1))
	return err == nil
}
