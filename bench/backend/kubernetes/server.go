package kubernetes

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/kubernetes/podagent"
)

// metricsClient reads the agents' metrics ports.
var metricsClient = &http.Client{Timeout: 5 * time.Second}

// server is one pod as a bench.Server. The pod stays for the whole run;
// its server process comes and goes through the agent.
type server struct {
	d    *Deployment
	name string
	pod  string
	spec *bench.ServerSpec
	user string   // the image's USER, the server's
	argv []string // the server's command line

	// Set once the pod runs.
	ip, node string

	mu sync.Mutex // one fault at a time
}

func (s *server) Name() string { return s.name }

// Addr implements bench.Server: the pod's address, which a restart
// through the agent keeps.
func (s *server) Addr() string { return net.JoinHostPort(s.ip, strconv.Itoa(s.spec.Port)) }

// OpsAddr implements bench.Server.
func (s *server) OpsAddr() string {
	if s.spec.OpsPort == 0 {
		return ""
	}
	return net.JoinHostPort(s.ip, strconv.Itoa(s.spec.OpsPort))
}

// waitRunning waits until the pod runs and notes its address and node.
func (s *server) waitRunning(ctx context.Context) error {
	p, err := s.d.waitPod(ctx, s.pod)
	if err == nil {
		s.ip, s.node = p.Status.PodIP, p.Spec.NodeName
	}
	return err
}

// waitPod waits until pod runs with an address and returns it.
func (d *Deployment) waitPod(ctx context.Context, pod string) (*corev1.Pod, error) {
	pods := d.c.api.CoreV1().Pods(d.namespace)
	var last *corev1.Pod
	err := poll(ctx, podStartTimeout, func() (bool, error) {
		p, err := pods.Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		switch p.Status.Phase {
		case corev1.PodRunning:
			return p.Status.PodIP != "", nil
		case corev1.PodFailed, corev1.PodSucceeded:
			return false, fmt.Errorf("kubernetes: pod %s ended: %s", pod, podProblem(p))
		}
		return false, nil
	})
	if err != nil && last != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("kubernetes: pod %s not running (%s): %w", pod, podProblem(last), err)
	}
	return last, err
}

// podProblem says why a pod is not running, from its status.
func podProblem(p *corev1.Pod) string {
	why := string(p.Status.Phase)
	if p.Status.Reason != "" {
		why += " " + p.Status.Reason + ": " + p.Status.Message
	}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			why += fmt.Sprintf("; %s waiting: %s %s", cs.Name, w.Reason, w.Message)
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			why += fmt.Sprintf("; %s exited %d: %s %s", cs.Name, t.ExitCode, t.Reason, t.Message)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			why += "; " + c.Message
		}
	}
	return why
}

func (s *server) agent(ctx context.Context, req podagent.Request) (podagent.Response, error) {
	return s.d.c.agent(ctx, s.d.namespace, s.pod, req)
}

// startAndWait starts the server through the agent and waits until it
// accepts connections and its spec calls it ready.
func (s *server) startAndWait(ctx context.Context) error {
	if _, err := s.agent(ctx, podagent.Request{Op: podagent.OpStart, Argv: s.argv, User: s.user}); err != nil {
		return fmt.Errorf("kubernetes: start %s: %w", s.name, err)
	}
	return s.waitReady(ctx)
}

func (s *server) waitReady(ctx context.Context) error {
	var dialer net.Dialer
	var lastErr error
	err := poll(ctx, readyTimeout, func() (bool, error) {
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		c, err := dialer.DialContext(dctx, "tcp", s.Addr())
		if err != nil {
			lastErr = err
			return false, nil
		}
		c.Close()
		if s.spec.Ready != nil {
			if lastErr = s.spec.Ready(dctx, s.Addr(), s.OpsAddr()); lastErr != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("kubernetes: %s at %s not ready: %w (last: %v)", s.name, s.Addr(), err, lastErr)
	}
	return err
}

// CPU implements bench.Server: the server container's cgroup, read by
// the agent in it and fetched from its metrics port (an exec through the
// API would cost tens of milliseconds per reading).
func (s *server) CPU(ctx context.Context) (time.Duration, string, bool, error) {
	resp, err := podagent.ReadCPU(ctx, metricsClient, s.ip)
	if err != nil {
		return 0, "", false, err
	}
	return resp.CPU, resp.CPUSource, true, nil
}

func (s *server) fault(ctx context.Context, req podagent.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.agent(ctx, req); err != nil {
		return fmt.Errorf("kubernetes: %s %s: %w", req.Op, s.name, err)
	}
	return nil
}

// Kill implements bench.Server: SIGKILL to the server's processes; the
// pod stays, so Restart brings it back on the same address.
func (s *server) Kill(ctx context.Context) error {
	return s.fault(ctx, podagent.Request{Op: podagent.OpKill})
}

// Stop implements bench.Server.
func (s *server) Stop(ctx context.Context) error {
	return s.fault(ctx, podagent.Request{Op: podagent.OpStop, Signal: s.spec.GracefulSignal(), Grace: stopGrace})
}

func (s *server) Pause(ctx context.Context) error {
	return s.fault(ctx, podagent.Request{Op: podagent.OpPause})
}

func (s *server) Unpause(ctx context.Context) error {
	return s.fault(ctx, podagent.Request{Op: podagent.OpUnpause})
}

// Cut implements bench.Server: the pod's interface down.
func (s *server) Cut(ctx context.Context) error {
	return s.fault(ctx, podagent.Request{Op: podagent.OpCut})
}

func (s *server) Restore(ctx context.Context) error {
	return s.fault(ctx, podagent.Request{Op: podagent.OpRestore})
}

// Restart implements bench.Server: a running server is stopped
// gracefully (a paused one is resumed by the stop), then started again in
// its pod, and waited for.
func (s *server) Restart(ctx context.Context) error {
	if err := s.Stop(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startAndWait(ctx)
}
