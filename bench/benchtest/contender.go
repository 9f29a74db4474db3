package benchtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers"
)

// StartContainers starts the servers of specs in containers for the test
// and removes them in t.Cleanup. It skips as RequireDocker does.
func StartContainers(t testing.TB, specs ...*bench.ServerSpec) *containers.Deployment {
	t.Helper()
	RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	d, err := containers.Start(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Contender checks contender c through the seam on deployment d, as the
// runner drives it: its servers' versions and settings read, its lock
// mutually exclusive (goroutines × cycles acquisitions of one key), and
// its coordinator counters, if it has any, counting at least two commands
// per acquisition.
func Contender(t testing.TB, c bench.Contender, d bench.Deployment, lease time.Duration, goroutines, cycles int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	servers := d.Servers(c.Server.Name)
	if len(servers) != c.Server.Count() {
		t.Fatalf("%s: %d servers, want %d", c.Name, len(servers), c.Server.Count())
	}
	if c.Server.Version != nil {
		for _, s := range servers {
			if v, err := c.Server.Version(ctx, s.Addr()); err != nil || v == "" {
				t.Errorf("%s: version of %s: %q, %v", c.Name, s.Name(), v, err)
			}
		}
	}
	if c.ServerSettings != nil {
		set, err := c.ServerSettings(ctx, servers, lease)
		if err != nil || len(set) == 0 {
			t.Errorf("%s: server settings %v, %v", c.Name, set, err)
		}
	}
	var coord bench.Coordinator
	var before bench.Counts
	if c.Counters != nil {
		var err error
		if coord, err = c.Counters(servers); err != nil && !errors.Is(err, bench.ErrNoCounters) {
			t.Fatal(err)
		}
		if coord != nil {
			defer coord.Close()
			if before, err = coord.Counts(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	l, err := c.Open(ctx, bench.Addrs(servers), lease)
	if err != nil {
		t.Fatal(err)
	}
	MutualExclusion(t, l, c.Name+"-seam", goroutines, cycles, 2*time.Minute)
	if err := l.Close(); err != nil {
		t.Error(err)
	}
	if coord == nil {
		return
	}
	// Every acquisition is at least an acquire and a release command. Some
	// servers publish their counts late (PostgreSQL's statistics arrive
	// up to seconds after a backend goes idle or exits): wait up to 20s.
	acquisitions := int64(goroutines * cycles)
	deadline := time.Now().Add(20 * time.Second)
	for {
		after, err := coord.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after.Commands-before.Commands >= 2*acquisitions {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: server commands %d → %d after %d acquisitions, want at least two per acquisition", c.Name, before.Commands, after.Commands, acquisitions)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
