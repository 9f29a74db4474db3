package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// probePod is the pod Up runs to see that pods start and are reachable.
const probePod = "monolock-bench-probe"

// RunKubectl runs the cluster's kubectl with the admin kubeconfig, stdin
// from stdin (nil: none), and returns its stdout.
func (c *Cluster) RunKubectl(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.Kubectl(), append([]string{"--kubeconfig", c.Kubeconfig()}, args...)...)
	cmd.Stdin = stdin
	return output(ctx, cmd)
}

// nodeReady succeeds when the node's Ready condition is True.
func (c *Cluster) nodeReady(ctx context.Context) error {
	out, err := c.RunKubectl(ctx, nil, "get", "node", NodeName, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	if err != nil {
		return err
	}
	if s := strings.TrimSpace(string(out)); s != "True" {
		return fmt.Errorf("node %s Ready=%q", NodeName, s)
	}
	return nil
}

// probe runs a pod of the sandbox image, waits until it is Running with
// an IP in PodSubnet that this host reaches, and deletes it.
func (c *Cluster) probe(ctx context.Context) (netip.Addr, error) {
	manifest := fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": %q, "namespace": "default"},
  "spec": {"automountServiceAccountToken": false, "terminationGracePeriodSeconds": 1,
    "containers": [{"name": "pause", "image": %q, "imagePullPolicy": "Never"}]}}`, probePod, SandboxImage)
	if _, err := c.RunKubectl(ctx, nil, "delete", "pod", "-n", "default", probePod, "--ignore-not-found", "--wait=true"); err != nil {
		return netip.Addr{}, err
	}
	// The default service account, which admission wants, appears a
	// moment after the controller manager starts.
	if err := waitFor(ctx, c.l, compControllerManager, time.Minute, func(ctx context.Context) error {
		_, err := c.RunKubectl(ctx, strings.NewReader(manifest), "create", "-f", "-")
		return err
	}); err != nil {
		return netip.Addr{}, err
	}
	var ip netip.Addr
	err := waitFor(ctx, c.l, compKubelet, 2*time.Minute, func(ctx context.Context) error {
		var err error
		ip, err = c.podIP(ctx, "default", probePod)
		return err
	})
	if err != nil {
		events, _ := c.RunKubectl(ctx, nil, "get", "events", "-n", "default", "--field-selector", "involvedObject.name="+probePod)
		return netip.Addr{}, fmt.Errorf("%w\nevents of the probe pod:\n%s", err, events)
	}
	if !netip.MustParsePrefix(PodSubnet).Contains(ip) {
		return netip.Addr{}, fmt.Errorf("localcluster: probe pod's IP %s is not in %s", ip, PodSubnet)
	}
	if err := Reachable(ctx, ip); err != nil {
		return netip.Addr{}, err
	}
	if _, err := c.RunKubectl(ctx, nil, "delete", "pod", "-n", "default", probePod, "--wait=true", "--timeout=60s"); err != nil {
		return netip.Addr{}, err
	}
	return ip, nil
}

// podIP returns the IP of a Running pod, or an error saying its phase.
func (c *Cluster) podIP(ctx context.Context, namespace, name string) (netip.Addr, error) {
	out, err := c.RunKubectl(ctx, nil, "get", "pod", "-n", namespace, name, "-o", `jsonpath={.status.phase} {.status.podIP}`)
	if err != nil {
		return netip.Addr{}, err
	}
	phase, ipText, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if phase != "Running" || ipText == "" {
		return netip.Addr{}, fmt.Errorf("pod %s/%s: phase %q, IP %q", namespace, name, phase, ipText)
	}
	ip, err := netip.ParseAddr(ipText)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("pod %s/%s: IP %q: %w", namespace, name, ipText, err)
	}
	return ip, nil
}

// Reachable reports whether this host reaches ip: a TCP connection to a
// port nobody listens on (9, discard) is refused by the pod's kernel
// when the route, the bridge and the forwarding rules work, and times out
// when they do not. A pause container listens on nothing; a connection
// that succeeds is as good.
func Reachable(ctx context.Context, ip netip.Addr) error {
	d := net.Dialer{Timeout: 3 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(ip, 9).String())
	if err == nil {
		conn.Close()
		return nil
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("localcluster: pod IP %s unreachable from this host: %w", ip, err)
}
