package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/kubernetes/podagent"
)

// benchProgram is the bench's own program in its image, which client
// hosts run.
const benchProgram = "/monolock-bench"

// clientHosts numbers the client pods of a run.
var clientHosts atomic.Int64

// ClientHost implements bench.ClientHoster: a pod of the bench's own
// image with the pod agent, preferring a node away from the servers. Its
// programs run there by exec through the API, relayed by a local
// `monolock-bench kube-exec`; their signals go through the agent, and host
// loss is the pod's network cut.
func (d *Deployment) ClientHost(ctx context.Context, name string) (bench.ClientHost, error) {
	pod := podName("client-" + name + "-" + strconv.FormatInt(clientHosts.Add(1), 10))
	spec := &bench.ServerSpec{Name: pod}
	p := podSpec(pod, spec, d.agentImage, d.agentImage, d.run)
	if _, err := d.c.api.CoreV1().Pods(d.namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("kubernetes: create client pod %s: %w", pod, err)
	}
	h := &clientHost{d: d, pod: pod}
	if _, err := d.waitPod(ctx, pod); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// clientHost is one client pod.
type clientHost struct {
	d   *Deployment
	pod string
}

// remoteArgv is the command line a program started by Command runs with
// in the pod: the bench's own program, whatever name the local one has.
func remoteArgv(args []string) []string { return append([]string{benchProgram}, args...) }

// Command implements bench.ClientHost: args run with the bench's program
// in the pod. The returned command is the local relay of their streams,
// name's `kube-exec` (name must be the monolock-bench program, as the
// holder's command is), and exits with their exit status.
func (h *clientHost) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	relay := append([]string{"kube-exec", h.d.kubeconfig, h.d.namespace, h.pod, "--"}, remoteArgv(args)...)
	return exec.CommandContext(ctx, name, relay...)
}

// Signal implements bench.RemoteClientHost.
func (h *clientHost) Signal(name string, args []string, sig syscall.Signal) (time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := h.d.c.agent(ctx, h.d.namespace, h.pod, podagent.Request{Op: podagent.OpSignal, Argv: remoteArgv(args), Signal: sig})
	return resp.At, err
}

// BenchHost implements bench.RemoteClientHost.
func (h *clientHost) BenchHost() string { return h.d.benchHost }

// Drop implements bench.ClientHost: both directions are the pod's cut,
// neither its restore; one direction alone the pod cannot drop.
func (h *clientHost) Drop(in, out bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := podagent.Request{Op: podagent.OpRestore}
	switch {
	case in && out:
		req.Op = podagent.OpCut
	case in || out:
		return fmt.Errorf("kubernetes: a client pod's network is cut both ways or not at all: %w", bench.ErrNotSupported)
	}
	_, err := h.d.c.agent(ctx, h.d.namespace, h.pod, req)
	return err
}

// Close deletes the pod at once.
func (h *clientHost) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	now := int64(0)
	err := h.d.c.api.CoreV1().Pods(h.d.namespace).Delete(ctx, h.pod, metav1.DeleteOptions{GracePeriodSeconds: &now})
	if err != nil {
		return fmt.Errorf("kubernetes: delete client pod %s: %w", h.pod, err)
	}
	return nil
}

// ExecMain is `monolock-bench kube-exec KUBECONFIG NAMESPACE POD -- ARGV…`:
// ARGV runs in the pod's main container by exec through the API, with
// this process's standard streams; the exit status is the program's (1
// when the exec itself failed). A client host's Command runs it.
func ExecMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 5 || args[3] != "--" {
		fmt.Fprintln(stderr, "usage: monolock-bench kube-exec KUBECONFIG NAMESPACE POD -- ARGV...")
		return 2
	}
	c, err := connect(args[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	err = c.exec(ctx, args[1], args[2], args[4:], stdin, stdout, stderr)
	var exit utilexec.CodeExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitStatus()
	}
	fmt.Fprintf(stderr, "kube-exec: %v\n", err)
	return 1
}
