package network

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// containerImage is the image the container test runs: the project's
// monolock server image, built by `go run ./docker/images build`.
func containerImage() string {
	if img := os.Getenv("MLB_NETWORK_TEST_IMAGE"); img != "" {
		return img
	}
	return "monolock-bench/monolock:latest"
}

func docker(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// TestContainerHost attaches a container started with --network none (a
// monolock server) as a host and reaches its server through the line:
// TCP connects to its lock port and HTTP requests to its ops port.
func TestContainerHost(t *testing.T) {
	needNetwork(t)
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker CLI")
	}
	ctx := t.Context()
	if _, err := docker(ctx, "version", "--format", "{{.Server.Version}}"); err != nil {
		t.Skipf("no Docker engine answers: %v", err)
	}
	image := containerImage()
	if _, err := docker(ctx, "image", "inspect", image); err != nil {
		t.Skipf("image %s is missing (go run ./docker/images build makes it)", image)
	}
	name := fmt.Sprintf("mlbt-demo-%d", os.Getpid())
	if _, err := docker(ctx, "run", "-d", "--rm", "--network", "none", "--name", name,
		"--label", "org.monolock-bench=1", "-e", "MONOLOCK_OPS_LISTEN_ADDRESS=0.0.0.0:9090", image); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := docker(context.Background(), "rm", "-f", name); err != nil {
			t.Error(err)
		}
	})
	pidText, err := docker(ctx, "inspect", "-f", "{{.State.Pid}}", name)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid == 0 {
		t.Fatalf("container pid %q: %v", pidText, err)
	}

	n := newTestNetwork(t, AZ)
	h, err := n.AttachNamespace(ctx, "monolock", pid, HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	server, ops := h.Addr(7070), h.Addr(9090)
	if !eventually(func() bool {
		c, err := net.DialTimeout("tcp", server, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatalf("the server at %s never accepted", server)
	}
	m, err := n.Measure(ctx, h, MeasureOptions{Addr: server, Samples: 50})
	if err != nil {
		t.Fatal(err)
	}
	low := floorOf(n, AZ.RTT, AZ.Jitter)
	if m.Connect.Min < low || m.RTT.Min < low {
		t.Errorf("connect min %v, rtt min %v below %v", m.Connect.Min, m.RTT.Min, low)
	}
	// An HTTP request on a new connection is two round trips: the
	// handshake and the request.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	var gets []time.Duration
	for range 20 {
		start := time.Now()
		resp, err := client.Get("http://" + ops + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		gets = append(gets, time.Since(start))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz: %s", resp.Status)
		}
	}
	get := spreadOf(gets)
	if get.Min < 2*low {
		t.Errorf("GET /healthz min %v below two round trips %v", get.Min, 2*low)
	}
	t.Logf("container %s (%s) at %s, asked %v: echo rtt %v | connect to its server %v | GET /healthz %v",
		name, image, h.IP(), AZ.RTT, m.RTT, m.Connect, get)
}
