package external

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

func TestDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers to stand in for external ones: not under -short (make test runs it)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	up := l.Addr().String()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := dead.Addr().String()
	dead.Close()
	ctx := context.Background()
	one := &bench.ServerSpec{Name: "one"}
	two := &bench.ServerSpec{Name: "two", Replicas: 2}
	specs := []*bench.ServerSpec{one, two}

	if err := New(specs, map[string]Addrs{"one": {Addrs: []string{up}}}).Check(ctx); err != nil {
		t.Fatalf("Check(up) = %v", err)
	}
	err = New(specs, map[string]Addrs{"one": {Addrs: []string{up}}, "two": {Addrs: []string{up, down}}}).Check(ctx)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Check(down) = %v, want ErrUnreachable", err)
	}

	d := New(specs, map[string]Addrs{"two": {Addrs: []string{up, up}, Ops: []string{"ops:1"}}})
	servers := d.Servers("two")
	if d.Servers("one") != nil || len(servers) != 2 || servers[1].Name() != "two-2" {
		t.Fatalf("Servers = %v / %v", d.Servers("one"), servers)
	}
	if servers[0].OpsAddr() != "ops:1" || servers[1].OpsAddr() != "" {
		t.Fatalf("ops addresses %q, %q", servers[0].OpsAddr(), servers[1].OpsAddr())
	}
	if _, _, ok, err := bench.ServerCPU(ctx, servers); ok || err != nil {
		t.Fatalf("ServerCPU ok=%v err=%v, want not ok", ok, err)
	}
	for _, fault := range []func(context.Context) error{servers[0].Kill, servers[0].Stop, servers[0].Restart,
		servers[0].Pause, servers[0].Unpause, servers[0].Cut, servers[0].Restore} {
		if err := fault(ctx); !errors.Is(err, bench.ErrNotSupported) {
			t.Errorf("fault operation = %v, want ErrNotSupported", err)
		}
	}
	var env results.Environment
	d.Describe(&env)
	if env.Backend != "external" || len(env.Servers) != 2 {
		t.Fatalf("Describe: %q, %+v", env.Backend, env.Servers)
	}
}
