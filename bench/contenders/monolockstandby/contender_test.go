package monolockstandby

import (
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/benchtest"
)

// The pair's two real servers as local child processes: the contender
// passes the seam's checks (mutual exclusion on its one address, the
// primary's) as the runner drives it.
func TestContenderLocal(t *testing.T) {
	d := benchtest.Start(t, Server)
	if n := len(d.Servers(Server.Name)); n != 2 {
		t.Fatalf("%d servers, want a primary and a standby", n)
	}
	benchtest.Contender(t, Contender(), d, 10*time.Second, 8, 20)
}

// The row says what it is: a standby pair, in the failover scenario
// only, with its claims on its own name.
func TestRow(t *testing.T) {
	c := Contender()
	if !c.Standby || c.Server.Count() != 2 || len(c.Scenarios) != 1 || c.Scenarios[0] != "failover" {
		t.Errorf("row %+v", c)
	}
	for _, r := range c.Claims {
		if r.Subject != Name || r.Scenario != "failover" {
			t.Errorf("claim %s: subject %s, scenario %s", r.ID, r.Subject, r.Scenario)
		}
	}
}
