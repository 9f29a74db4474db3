package localcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// hostRecord is what Up found on the host before changing it, and what it
// added, so that Down takes away exactly that. It is kept as host.json in
// the state dir; the sysctl values are in sysctl-before.conf beside it.
type hostRecord struct {
	// Created are host paths (outside the state dir) that did not exist
	// before Up and that the cluster's programs create: Down removes the
	// cluster's entries in them, then each that is left empty.
	Created []string `json:"created"`
	// Rules are the iptables rules Up added, each as the arguments after
	// -I/-D (chain first).
	Rules [][]string `json:"rules"`
	// Chains are the iptables chains kubelet creates that did not exist
	// before Up.
	Chains []iptablesChain `json:"chains"`
	// Cgroups are the cgroup directories kubelet creates that did not
	// exist before Up (one per cgroup v1 hierarchy).
	Cgroups []string `json:"cgroups"`
}

// iptablesChain is a chain of a table of the iptables (IPv4) or ip6tables
// command.
type iptablesChain struct {
	Command string `json:"command"`
	Table   string `json:"table"`
	Chain   string `json:"chain"`
}

// hostPaths are the host directories outside the state dir that the
// cluster's programs write to: libcni's result cache, kubelet's links to
// container logs, the shims' socket directory of containerd 1.6, and the
// directories ctr and runc fall back to (fifos, runc's state).
var hostPaths = []string{
	"/var/lib/cni/results",
	"/var/lib/cni",
	"/var/log/containers",
	"/run/containerd/s",
	"/run/containerd/fifo",
	"/run/containerd/runc/" + ImageNamespace,
	"/run/containerd/runc",
	"/run/containerd",
}

// kubeletChains are the chains kubelet makes (kubelet_network_linux.go):
// a hint chain naming the iptables flavour, a canary chain per table that
// tells it the rules were flushed, and the martian-packet firewall.
var kubeletChains = []iptablesChain{
	{"iptables", "mangle", "KUBE-IPTABLES-HINT"},
	{"iptables", "mangle", "KUBE-KUBELET-CANARY"},
	{"iptables", "nat", "KUBE-KUBELET-CANARY"},
	{"iptables", "filter", "KUBE-KUBELET-CANARY"},
	{"iptables", "filter", "KUBE-FIREWALL"},
	{"ip6tables", "mangle", "KUBE-IPTABLES-HINT"},
	{"ip6tables", "mangle", "KUBE-KUBELET-CANARY"},
	{"ip6tables", "nat", "KUBE-KUBELET-CANARY"},
	{"ip6tables", "filter", "KUBE-KUBELET-CANARY"},
}

// cgroupRoot holds the cgroup v1 hierarchies; kubelet (cgroupfs driver,
// default cgroupRoot) puts every pod below kubepods in each.
const cgroupRoot = "/sys/fs/cgroup"

// ruleComment marks the iptables rules Up adds.
const ruleComment = "monolock-bench-kubernetes"

// recordHost notes what exists before Up changes anything, unless a
// record is there already (a half-started cluster's, which knows the
// host from before that start).
func recordHost(ctx context.Context, l layout) (hostRecord, error) {
	if r, ok, err := readHostRecord(l); err != nil || ok {
		return r, err
	}
	var r hostRecord
	for _, p := range hostPaths {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			r.Created = append(r.Created, p)
		}
	}
	for _, c := range kubeletChains {
		if _, err := exec.LookPath(c.Command); err != nil {
			continue
		}
		if !chainExists(ctx, c) {
			r.Chains = append(r.Chains, c)
		}
	}
	hierarchies, err := os.ReadDir(cgroupRoot)
	if err != nil {
		return hostRecord{}, fmt.Errorf("localcluster: %w", err)
	}
	for _, h := range hierarchies {
		// "unified" too: kubelet mirrors its tree into the cgroup v2
		// hierarchy of a hybrid host.
		if !h.IsDir() {
			continue
		}
		p := filepath.Join(cgroupRoot, h.Name(), "kubepods")
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			r.Cgroups = append(r.Cgroups, p)
		}
	}
	return r, writeHostRecord(l, r)
}

func readHostRecord(l layout) (hostRecord, bool, error) {
	var r hostRecord
	b, err := os.ReadFile(l.hostFile())
	if errors.Is(err, os.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("localcluster: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, false, fmt.Errorf("localcluster: %s: %w", l.hostFile(), err)
	}
	return r, true, nil
}

func writeHostRecord(l layout, r hostRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	if err := os.WriteFile(l.hostFile(), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	return nil
}

// bridgeRules are the rules that let traffic into and out of the pods'
// bridge through the FORWARD chain, whose policy Docker sets to DROP
// (with br_netfilter on, even traffic between two pods on the bridge
// passes FORWARD). They go into DOCKER-USER, which Docker evaluates first
// and never flushes, when it exists, else into FORWARD.
func bridgeRules(ctx context.Context) [][]string {
	chain := "FORWARD"
	if chainExists(ctx, iptablesChain{"iptables", "filter", "DOCKER-USER"}) {
		chain = "DOCKER-USER"
	}
	var rules [][]string
	for _, dir := range []string{"-i", "-o"} {
		rules = append(rules, []string{chain, dir, BridgeName, "-m", "comment", "--comment", ruleComment, "-j", "ACCEPT"})
	}
	return rules
}

// addBridgeRules inserts the rules (recorded first, so a failure half way
// is undone by Down).
func addBridgeRules(ctx context.Context, l layout, r *hostRecord) error {
	if len(r.Rules) > 0 {
		return nil // a previous Up added them, and Down has not removed them yet
	}
	r.Rules = bridgeRules(ctx)
	if err := writeHostRecord(l, *r); err != nil {
		return err
	}
	for _, rule := range r.Rules {
		if err := iptables(ctx, "iptables", append([]string{"-I", rule[0], "1"}, rule[1:]...)...); err != nil {
			return err
		}
	}
	return nil
}

// deleteRules deletes every copy of each recorded rule.
func deleteRules(ctx context.Context, r hostRecord) error {
	var errs []error
	for _, rule := range r.Rules {
		for range 10 {
			if iptables(ctx, "iptables", append([]string{"-C"}, rule...)...) != nil {
				break
			}
			if err := iptables(ctx, "iptables", append([]string{"-D"}, rule...)...); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	return errors.Join(errs...)
}

// deleteChains removes the kubelet chains that were not there before Up,
// first the rules of other chains that jump to them.
func deleteChains(ctx context.Context, r hostRecord) error {
	var errs []error
	for _, c := range r.Chains {
		if !chainExists(ctx, c) {
			continue
		}
		out, err := exec.CommandContext(ctx, c.Command, "-w", "-t", c.Table, "-S").Output()
		if err != nil {
			errs = append(errs, fmt.Errorf("localcluster: %s -t %s -S: %w", c.Command, c.Table, err))
			continue
		}
		for _, rule := range jumpsTo(out, c.Chain) {
			if err := iptables(ctx, c.Command, append([]string{"-t", c.Table, "-D"}, rule...)...); err != nil {
				errs = append(errs, err)
			}
		}
		if err := iptables(ctx, c.Command, "-t", c.Table, "-F", c.Chain); err != nil {
			errs = append(errs, err)
		}
		if err := iptables(ctx, c.Command, "-t", c.Table, "-X", c.Chain); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// jumpsTo returns, from `iptables -S` output, the rules of other chains
// that jump to chain, as arguments after -D. Such rules are kubelet's
// plain jumps (`-A INPUT -j KUBE-FIREWALL`); a rule with quoted
// arguments is not one of them and is left alone.
func jumpsTo(listing []byte, chain string) [][]string {
	var out [][]string
	for line := range strings.Lines(string(listing)) {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "-A" || f[1] == chain || strings.Contains(line, `"`) {
			continue
		}
		if f[len(f)-2] == "-j" && f[len(f)-1] == chain {
			out = append(out, f[1:])
		}
	}
	return out
}

func chainExists(ctx context.Context, c iptablesChain) bool {
	return exec.CommandContext(ctx, c.Command, "-w", "-t", c.Table, "-n", "-L", c.Chain).Run() == nil
}

// iptables runs an iptables command, waiting for the xtables lock (-w)
// that Docker and kubelet take too.
func iptables(ctx context.Context, command string, args ...string) error {
	cmd := exec.CommandContext(ctx, command, append([]string{"-w"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("localcluster: %s %s: %w: %s", command, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// removeCreatedPaths removes the cluster's entries in the recorded host
// directories (log links into the state dir, CNI results of its sandboxes),
// then each directory it created that is now empty, deepest first.
func removeCreatedPaths(l layout, r hostRecord) error {
	var errs []error
	if links, err := os.ReadDir("/var/log/containers"); err == nil {
		for _, e := range links {
			p := filepath.Join("/var/log/containers", e.Name())
			if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, l.dir+"/") {
				if err := os.Remove(p); err != nil {
					errs = append(errs, fmt.Errorf("localcluster: %w", err))
				}
			}
		}
	}
	// libcni caches a result per sandbox and network (ours, and the CRI
	// plugin's own loopback) until the CNI DEL that a killed sandbox
	// never got.
	sandboxes, _ := os.ReadDir(l.path("containerd", "root", "io.containerd.grpc.v1.cri", "sandboxes"))
	for _, sb := range sandboxes {
		results, _ := filepath.Glob("/var/lib/cni/results/*-" + sb.Name() + "-*")
		for _, p := range results {
			if err := os.Remove(p); err != nil {
				errs = append(errs, fmt.Errorf("localcluster: %w", err))
			}
		}
	}
	created := slices.Clone(r.Created)
	slices.SortFunc(created, func(a, b string) int { return len(b) - len(a) })
	for _, p := range created {
		// os.Remove removes a directory only when it is empty: one another
		// program filled meanwhile stays.
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) {
			errs = append(errs, fmt.Errorf("localcluster: %w", err))
		}
	}
	return errors.Join(errs...)
}
