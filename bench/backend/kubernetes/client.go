package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/monolock/monolock-bench/bench/backend/kubernetes/podagent"
)

// client is the API connection of one deployment.
type client struct {
	config *rest.Config
	api    k8s.Interface
	// host is the API server's address, for the report.
	host string
}

// connect reads the kubeconfig at path, or from the usual places when
// path is empty ($KUBECONFIG, then ~/.kube/config), as kubectl does.
func connect(path string) (*client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes: kubeconfig: %w", err)
	}
	// The bench's faults are a few API calls each; the default 5 per
	// second would queue a chaos schedule's.
	config.QPS, config.Burst = 50, 100
	api, err := k8s.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	return &client{config: config, api: api, host: config.Host}, nil
}

// agent sends req to the pod agent of the server container of pod, by
// exec through the API server (pods/exec), and returns its answer.
func (c *client) agent(ctx context.Context, namespace, pod string, req podagent.Request) (podagent.Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return podagent.Response{}, fmt.Errorf("kubernetes: %w", err)
	}
	cmd := []string{podagent.Binary, "pod-agent", "ctl", podagent.Socket, string(body)}
	var stdout, stderr bytes.Buffer
	if err := c.exec(ctx, namespace, pod, cmd, nil, &stdout, &stderr); err != nil {
		if ctx.Err() != nil {
			return podagent.Response{}, ctx.Err()
		}
		return podagent.Response{}, fmt.Errorf("kubernetes: %s in %s: %w: %s", req.Op, pod, err, strings.TrimSpace(stderr.String()))
	}
	var resp podagent.Response
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return podagent.Response{}, fmt.Errorf("kubernetes: %s in %s: answer %q: %w", req.Op, pod, stdout.String(), err)
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}

// exec runs cmd in the main container of pod through the API server
// (websocket, else SPDY), with the given streams (a nil stdin sends
// none), and returns when it ended: an error carrying its exit status
// (k8s.io/client-go/util/exec.CodeExitError) when it failed.
func (c *client) exec(ctx context.Context, namespace, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) error {
	url := c.api.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: serverContainer, Command: cmd, Stdin: stdin != nil, Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
	ws, err := remotecommand.NewWebSocketExecutor(c.config, "GET", url.String())
	if err != nil {
		return err
	}
	spdy, err := remotecommand.NewSPDYExecutor(c.config, "POST", url)
	if err != nil {
		return err
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	return exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}
