package postgres

import (
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestSeam runs both rows through the seam on the servers their specs
// describe, as child processes and in containers, and checks that the
// tuned row's server has the tuned keepalives.
func TestSeam(t *testing.T) {
	if testing.Short() {
		t.Skip("initdb and PostgreSQL servers: not under -short (make test runs it)")
	}
	for _, c := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"local", func(t *testing.T) {
			d := benchtest.Start(t, Server, KeepaliveServer)
			benchtest.Contender(t, Contender(), d, time.Second, 4, 10)
			benchtest.Contender(t, KeepaliveContender(), d, time.Second, 4, 10)
			checkKeepalives(t, d.Servers(Server.Name)[0].Addr(), d.Servers(KeepaliveServer.Name)[0].Addr())
		}},
		{"containers", func(t *testing.T) {
			d := benchtest.StartContainers(t, Server, KeepaliveServer)
			benchtest.Contender(t, Contender(), d, time.Second, 4, 10)
			benchtest.Contender(t, KeepaliveContender(), d, time.Second, 4, 10)
			checkKeepalives(t, d.Servers(Server.Name)[0].Addr(), d.Servers(KeepaliveServer.Name)[0].Addr())
		}},
	} {
		t.Run(c.name, c.run)
	}
}

// checkKeepalives reads the recorded settings of both servers: the tuned
// one has TunedKeepalives, the default one does not.
func checkKeepalives(t *testing.T, plain, tuned string) {
	t.Helper()
	for addr, want := range map[string]bool{plain: false, tuned: true} {
		set, err := newProbe(t, addr).Settings(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got := set["server.tcp_keepalives_idle"] == "1"; got != want || set["server.idle_session_timeout"] == "" {
			t.Errorf("server at %s: %v; want tuned keepalives %v", addr, set, want)
		}
	}
}
