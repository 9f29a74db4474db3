package local

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

func TestDeployment(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil && os.Getenv("CI") == "" {
		t.Skip(ErrNoRedisServer)
	}
	ctx := context.Background()
	d, err := Start(ctx, Config{Roles: []string{bench.RoleRedlock, bench.RoleTCPFloor}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if n := len(d.Addrs(bench.RoleRedlock)); n != RedlockMasters {
		t.Fatalf("%d redlock masters, want %d", n, RedlockMasters)
	}
	if d.Addrs(bench.RoleRedis) != nil {
		t.Fatal("a role that was not started has addresses")
	}
	cpu, src, ok, err := d.ServerCPU(ctx, bench.RoleRedlock)
	if err != nil || !ok || cpu < 0 || !strings.Contains(src, "/proc") {
		t.Fatalf("ServerCPU = %v, %q, %v, %v", cpu, src, ok, err)
	}
	if _, _, _, err := d.ServerCPU(ctx, bench.RoleRedis); !errors.Is(err, bench.ErrNoServers) {
		t.Fatalf("ServerCPU of a missing role = %v, want ErrNoServers", err)
	}
	var env results.Environment
	d.Describe(&env)
	if env.Backend != "local" || len(env.Servers) != RedlockMasters+1 {
		t.Fatalf("Describe: backend %q, %d servers", env.Backend, len(env.Servers))
	}

	// Kill and Restart keep the address: a failover scenario relies on it.
	p := d.Processes(bench.RoleRedlock)[0]
	p.Kill()
	if dial(p.Addr) {
		t.Fatal("killed master still accepts connections")
	}
	if err := p.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if !dial(p.Addr) {
		t.Fatal("restarted master does not accept connections")
	}

	all := append(d.Addrs(bench.RoleRedlock), d.Addrs(bench.RoleTCPFloor)...)
	d.Close()
	d.Close() // twice is fine
	for _, a := range all {
		if dial(a) {
			t.Errorf("%s still accepts connections after Close", a)
		}
	}
}

func TestStartRejectsUnknownRole(t *testing.T) {
	if _, err := Start(context.Background(), Config{Roles: []string{"zookeeper"}}); err == nil || !strings.Contains(err.Error(), "unknown server role") {
		t.Fatalf("Start = %v, want an unknown-role error", err)
	}
}

func dial(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
