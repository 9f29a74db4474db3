package localcluster_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/backend/kubernetes/localcluster"
	"github.com/monolock/monolock-bench/bench/contenders/etcd"
)

// hostSysctls are read before and after a cluster of the test's own, to
// see that Down put them back.
var hostSysctls = []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes", "net/ipv4/ip_forward"}

// testStateDir is where TestClusterRunsAPod starts a cluster of its own.
var testStateDir = filepath.Join(filepath.Dir(localcluster.DefaultStateDir), "kubernetes-test")

// TestClusterRunsAPod runs a pod of the pause image on the cluster that
// is up, or on one it starts (and then stops, checking that nothing is
// left on the host). It never builds Kubernetes: without the cached
// binaries it skips.
func TestClusterRunsAPod(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Kubernetes cluster")
	}
	if os.Geteuid() != 0 {
		t.Skip("a cluster needs root")
	}
	if bin, ok := localcluster.Built(); !ok {
		t.Skipf("the Kubernetes binaries are not in %s: `make cluster` builds them once (15-25 min); this test does not", bin)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()

	c, running, err := localcluster.Running(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var before map[string]string
	var chainsBefore string
	if !running {
		before = readSysctls(t)
		chainsBefore = iptablesChains(t)
		// Only the pause program is compiled here, when missing (gcc).
		bin, err := localcluster.Build(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		etcdServer, err := etcd.BuildServer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		// A state dir of its own: the tests that reuse a cluster (they look
		// in the default one) must not find this one, which goes down
		// under them when this test ends.
		c, err = localcluster.Up(ctx, localcluster.Options{BinDir: bin, Etcd: etcdServer, StateDir: testStateDir})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("cluster started in %s", time.Since(start).Round(time.Millisecond))
	} else {
		t.Logf("using the cluster up since %s", c.Started().Format(time.RFC3339))
	}

	pod := fmt.Sprintf("localcluster-test-%d", os.Getpid())
	manifest := fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": %q, "namespace": "default"},
  "spec": {"terminationGracePeriodSeconds": 1,
    "containers": [{"name": "pause", "image": %q, "imagePullPolicy": "Never"}]}}`, pod, localcluster.SandboxImage)
	if _, err := c.RunKubectl(ctx, strings.NewReader(manifest), "create", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	var ip netip.Addr
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := c.RunKubectl(ctx, nil, "get", "pod", "-n", "default", pod, "-o", `jsonpath={.status.phase} {.status.podIP}`)
		if err != nil {
			t.Fatal(err)
		}
		phase, ipText, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
		if phase == "Running" && ipText != "" {
			if ip, err = netip.ParseAddr(ipText); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			events, _ := c.RunKubectl(ctx, nil, "get", "events", "-n", "default")
			t.Fatalf("pod %s: phase %q after 2m\n%s", pod, phase, events)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !netip.MustParsePrefix(localcluster.PodSubnet).Contains(ip) {
		t.Errorf("pod IP %s is not in %s", ip, localcluster.PodSubnet)
	}
	if err := localcluster.Reachable(ctx, ip); err != nil {
		t.Error(err)
	}
	if _, err := c.RunKubectl(ctx, nil, "delete", "pod", "-n", "default", pod, "--wait=true", "--timeout=60s"); err != nil {
		t.Error(err)
	}
	if running {
		return // someone else's cluster: left up
	}

	if err := c.Down(ctx); err != nil {
		t.Fatal(err)
	}
	state := c.StateDir()
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state dir %s still there: %v", state, err)
	}
	if procs := processesMentioning(t, state); len(procs) > 0 {
		t.Errorf("processes left: %s", strings.Join(procs, "\n"))
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mountinfo), state) {
		t.Errorf("mounts left under %s", state)
	}
	if _, err := net.InterfaceByName(localcluster.BridgeName); err == nil {
		t.Errorf("bridge %s left", localcluster.BridgeName)
	}
	if after := readSysctls(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("sysctls: before %v, after %v", before, after)
	}
	if after := iptablesChains(t); after != chainsBefore {
		t.Errorf("iptables chains: before\n%s\nafter\n%s", chainsBefore, after)
	}
	if out, _ := exec.Command("iptables", "-w", "-S").Output(); strings.Contains(string(out), "monolock-bench-kubernetes") {
		t.Errorf("iptables rules left:\n%s", out)
	}
}

func readSysctls(t *testing.T) map[string]string {
	t.Helper()
	values := map[string]string{}
	for _, name := range hostSysctls {
		b, err := os.ReadFile(filepath.Join("/proc/sys", name))
		if err != nil {
			t.Fatal(err)
		}
		values[name] = strings.TrimSpace(string(b))
	}
	return values
}

// iptablesChains lists the KUBE- chains of every table, IPv4 and IPv6.
func iptablesChains(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, err := exec.Command(cmd, "-w", "-t", table, "-S").Output()
			if err != nil {
				t.Fatalf("%s -t %s -S: %v", cmd, table, err)
			}
			for line := range strings.Lines(string(out)) {
				if strings.Contains(line, "KUBE-") {
					fmt.Fprintf(&b, "%s %s %s", cmd, table, line)
				}
			}
		}
	}
	return b.String()
}

// processesMentioning lists the processes whose command line holds s.
func processesMentioning(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || e.Name() == fmt.Sprint(os.Getpid()) {
			continue
		}
		if strings.Contains(string(cmdline), s) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}
