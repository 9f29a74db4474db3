package main

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/network"
)

// mainEnv makes the test binary the command itself (main), for tests that
// must kill a whole run.
const mainEnv = "MONOLOCK_BENCH_TEST_MAIN"

func TestMain(m *testing.M) {
	network.ChildMain() // the delay line and namespace shim of a run under a profile
	if os.Getenv(mainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// testPrefix keeps this test's networks apart from other benches' on the
// machine, whose start sweeps would otherwise remove what it checks.
const testPrefix = "mlbc-"

// netnsNames lists the named network namespaces with the test's prefix.
func netnsNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), testPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestKilledRunIsSweptAway: a run under a profile killed with SIGKILL
// while its servers run on their emulated hosts leaves its namespaces
// behind; the sweep every run starts with removes them, and a second
// network builds.
func TestKilledRunIsSweptAway(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a run")
	}
	if os.Geteuid() != 0 {
		t.Skip("emulated hosts need root")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	// What killed runs left before is swept first, so that the names the
	// run under test leaves are new ones (a run reuses a stale slot's
	// names).
	if _, err := network.Sweep(testPrefix); err != nil {
		t.Fatal(err)
	}
	before := netnsNames(t)
	cmd := exec.Command(os.Args[0], "run", "--backend", "local", "--network", "rtt=1ms", "--scenarios", "latency",
		"--contenders", "redis", "--floors=false", "--quick", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), mainEnv+"=1", prefixEnv+"="+testPrefix)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The run has its hosts and servers once it has measured a path.
	sc := bufio.NewScanner(stderr)
	measured := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "path measured") {
			measured = true
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	go func() {
		for sc.Scan() {
		}
	}()
	cmd.Wait()
	if !measured {
		t.Fatal("the run ended before it measured a path")
	}
	var left []string
	for _, n := range netnsNames(t) {
		if !slices.Contains(before, n) {
			left = append(left, n)
		}
	}
	if len(left) == 0 {
		t.Fatal("the killed run left no namespace: nothing was tested")
	}
	// The run's slot is stale once its line, a child that dies of the
	// run's death (its parent-death signal), has exited too: until then
	// the sweep rightly leaves the slot alone. The next run sweeps again.
	var removed []string
	gone := func() bool {
		for _, n := range left {
			if slices.Contains(netnsNames(t), n) {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(10 * time.Second); !gone() && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r, err := network.Sweep(testPrefix)
		if err != nil {
			t.Fatal(err)
		}
		removed = append(removed, r...)
	}
	if !gone() {
		t.Errorf("namespaces %v of the killed run are still there after 10 s of sweeps (removed %v)", left, removed)
	}
	p, _ := network.Parse("rtt=1ms")
	n, err := network.New(t.Context(), network.Options{Profile: p, Prefix: testPrefix})
	if err != nil {
		t.Fatalf("a second network after the killed run: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}
