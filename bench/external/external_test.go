package external

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/monolock/monolock-bench/bench"
)

func TestCheck(t *testing.T) {
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

	if err := New(map[string][]string{bench.RoleRedis: {up}}).Check(context.Background()); err != nil {
		t.Fatalf("Check(up) = %v", err)
	}
	err = New(map[string][]string{bench.RoleRedis: {up}, bench.RoleMonolock: {down}}).Check(context.Background())
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Check(down) = %v, want ErrUnreachable", err)
	}
	d := New(map[string][]string{bench.RoleRedis: {up}, bench.RoleMonolock: nil})
	if d.Addrs(bench.RoleMonolock) != nil || len(d.Addrs(bench.RoleRedis)) != 1 {
		t.Fatalf("Addrs = %v / %v", d.Addrs(bench.RoleMonolock), d.Addrs(bench.RoleRedis))
	}
	if _, _, ok, err := d.ServerCPU(context.Background(), bench.RoleRedis); ok || err != nil {
		t.Fatalf("ServerCPU ok=%v err=%v, want not ok", ok, err)
	}
}
