package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/external"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/network"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

// childEnv marks the test binary re-executed as a holder child.
const childEnv = "MONOLOCK_BENCH_HANDOVER_TEST_HOLDER"

func TestMain(m *testing.M) {
	network.ChildMain() // the delay line and the shim into an emulated host, before the holder
	if os.Getenv(childEnv) == "1" {
		if err := holder.Main(context.Background(), os.Args[1:], holderContenders(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(workloadChildEnv) == "1" {
		if err := load.ChildMain(context.Background(), holderContenders(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestHandoverSmoke runs one trial per mode and contender against real servers
// (monolock and redis-server child processes) with a short lease, checks
// the figures' shape and bounds that tell the mechanisms apart, and that
// no holder process is left behind.
func TestHandoverSmoke(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	contenders, d := locks(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Short, but not so short that a holder on a loaded machine (the race
	// detector, parallel test binaries) misses its heartbeats and loses the
	// lock before t0: the client gives up at 0.8 × lease.
	const lease = time.Second
	cmd := holder.Command{Path: exe, Env: append(os.Environ(), childEnv+"=1")}

	// The leak check must see a live holder, or it could not fail.
	h, err := holder.Start(ctx, cmd, holder.Spec{Contender: contenders[0].Name, Addrs: bench.Addrs(d.Servers(contenders[0].Server.Name)), Lease: lease, Key: "leak-check"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(holderChildren(t)); n != 1 {
		t.Errorf("leak check sees %d holder processes while one runs", n)
	}
	h.Close()

	res := runScenario(ctx, t, HandoverConfig{Holder: cmd, Trials: 1, FreezeTrials: 1}.Scenario(), contenders, d, lease)
	if want := 4 * len(contenders); len(res.Raw) != want {
		t.Fatalf("%d raw records, want %d", len(res.Raw), want)
	}
	fast := lease / 2 // well below any expiry-driven handover
	// Locks owned by a connection end when a crashed holder's kernel
	// closes it; those without a lease are never ended by a freeze (the
	// frozen holder's connection stays open), so that trial fails.
	connectionOwned := map[string]bool{"monolock": true, "monolock-warm": true, "monolock-tfo": true, "postgres": true, "postgres-keepalive": true}
	noLease := map[string]bool{"postgres": true, "postgres-keepalive": true}
	for _, raw := range res.Raw {
		name := raw.Contender + "/" + raw.Variant
		if raw.Skipped != "" {
			// A contender's cap (postgres-keepalive's freeze is
			// postgres's): it must say so, and measure nothing.
			if !strings.HasPrefix(raw.Skipped, "capped: ") || len(raw.Metrics) != 0 {
				t.Errorf("%s: skipped %q with %d metrics, want a cap without figures", name, raw.Skipped, len(raw.Metrics))
			}
			continue
		}
		m := map[string]float64{}
		for _, x := range raw.Metrics {
			m[x.Name] = x.Value
		}
		if (raw.Variant == Freeze || raw.Variant == HostLoss) && noLease[raw.Contender] {
			if m["failed"] != 1 {
				t.Errorf("%s: failed %v, want the one trial failed: nothing ends a frozen holder's claim", name, m["failed"])
			}
			continue
		}
		if m["failed"] != 0 || len(raw.Series) != 1 || len(raw.Series[0].Values) != 1 {
			t.Errorf("%s: failed %v, series %+v, errors %v", name, m["failed"], raw.Series, raw.Errors)
			continue
		}
		p50 := time.Duration(m["p50"] * float64(time.Millisecond))
		t.Logf("%s: handover %v", name, p50)
		// A silent holder (frozen, or its packets dropped by the proxy)
		// is ended only by its lease; a crashed one too, unless the
		// server sees the closed connection.
		expiry := raw.Variant == Freeze || raw.Variant == HostLoss || (raw.Variant == Crash && !connectionOwned[raw.Contender])
		switch {
		case expiry && p50 < fast:
			t.Errorf("%s: handover %v, want at least %v: only the lease/TTL ends this holder", name, p50, fast)
		case !expiry && strings.HasPrefix(raw.Contender, "monolock") && p50 >= fast:
			t.Errorf("%s: handover %v, want well below the lease (%v)", name, p50, lease)
		case p50 > grantBound(lease):
			t.Errorf("%s: handover %v beyond the trial bound", name, p50)
		}
	}
	if left := holderChildren(t); len(left) > 0 {
		t.Errorf("holder processes left behind: %v", left)
	}
}

// holderChildren lists the children of this process that run this test
// binary (re-executed holders), zombies included.
func holderChildren(t *testing.T) []string {
	t.Helper()
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	comm := strings.TrimSpace(string(self))
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var found []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+1:]) // state, ppid, ...
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) || s[open+1:close] != comm {
			continue
		}
		found = append(found, fmt.Sprintf("pid %s (%s, state %s)", strings.Fields(s)[0], comm, f[0]))
	}
	return found
}

// TestHandoverWithoutServerCounters runs against a deployment that exposes no
// monolock ops address (the external backend without one): the waiter is
// given the settle pause instead, and a holder that cannot start fails the
// step instead of counting failed handovers.
func TestHandoverWithoutServerCounters(t *testing.T) {
	srv := monolocktest.NewServer(t)
	c := monolock.Contender()
	d := external.New([]*bench.ServerSpec{c.Server}, map[string]external.Addrs{c.Server.Name: {Addrs: []string{srv.Addr}}})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cmd     holder.Command
		wantErr bool
	}{
		{"settle pause", holder.Command{Path: exe, Env: append(os.Environ(), childEnv+"=1")}, false},
		{"holder cannot start", holder.Command{Path: filepath.Join(t.TempDir(), "no-such-binary")}, true},
	}
	// A graceful handover is a release crossing a pipe into the holder
	// process and two round trips to the server, well below any lease on
	// an idle machine, but a loaded one (CI's two cores, the race
	// detector, parallel test binaries) has delayed it by seconds (1.75s
	// measured at load ~15). The lease is long enough to be an upper bound
	// such a machine honours and that a handover the lease ended instead
	// of the release would still break; and the holder keeps its lock
	// while descheduled (it gives up at 0.8 × lease).
	const lease = 5 * time.Second
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := HandoverConfig{Holder: tt.cmd, Trials: 2}.Scenario().Variants(false)[0]
			servers := d.Servers(c.Server.Name)
			env := &bench.Env{Contender: c, Servers: servers, Addrs: bench.Addrs(servers), Lease: lease}
			raw, err := v.Run(context.Background(), env)
			if tt.wantErr {
				if !errors.Is(err, errSetup) {
					t.Fatalf("Run = %v, want an error wrapping errSetup", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if raw.Counts["failed"] != 0 || len(raw.Series[0].Values) != 2 {
				t.Fatalf("counts %v, series %v, errors %v", raw.Counts, raw.Series, raw.Errors)
			}
			for _, v := range raw.Series[0].Values {
				if v >= ms(lease) {
					t.Errorf("graceful handover %vms, want below the %v lease: the release, not the lease, ends the holder's claim", v, lease)
				}
			}
		})
	}
}
