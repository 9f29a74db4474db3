package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// DefaultStartTimeout bounds how long Start and Restart wait for a
// container to become ready when Spec.StartTimeout is zero.
const DefaultStartTimeout = 60 * time.Second

// stopTimeout is the grace period Stop gives a container after SIGTERM.
const stopTimeout = 10 * time.Second

// Spec describes a container to start.
type Spec struct {
	// Name is short and unique within the session ("server",
	// "server-3"); the container is named "<Session.Network>-<Name>".
	Name  string
	Image Image
	// Cmd is the command, or the entrypoint's arguments for images with
	// one (the static Go images).
	Cmd []string
	Env map[string]string
	// Port is the TCP port of the service inside the container; Addr
	// reaches it.
	Port int
	// Ports are further TCP ports to reach with AddrOf (an ops port).
	Ports []int
	// Ready reports whether the started container serves; it is polled
	// until it returns nil. Default: TCPReady.
	Ready ReadyFunc
	// StartTimeout bounds the wait for Ready. Default: DefaultStartTimeout.
	StartTimeout time.Duration
	// Sysctls are namespaced kernel settings of the container
	// (HostConfig.Sysctls), e.g. net.ipv4.tcp_fastopen for its own
	// network namespace. Default none.
	Sysctls map[string]string
	// StopSignal is the signal Stop and Restart send a running container
	// before the kill after 10s ("SIGINT"); default SIGTERM. It is set at
	// creation: engines before API 1.42 take no signal with a stop.
	StopSignal string
}

// Container is a running (or stopped, killed, paused) container of a
// Session. Its methods are safe for concurrent use.
type Container struct {
	// Name is the Spec's short name.
	Name string
	// ID is the Docker container ID (for `docker stats`, cgroups).
	ID string
	// IP is the container's fixed address on the session network; other
	// containers of the session reach it there.
	IP netip.Addr
	// Image is what the container runs.
	Image Image
	// Path says how Addr is reached: PathDirect or PathPublished.
	Path string

	spec    Spec
	ctr     testcontainers.Container
	api     client.APIClient
	network string // the session network, for Cut and Restore

	mu        sync.Mutex
	published map[int]string // port → host:port, in PathPublished mode
}

// Start creates and starts a container from spec on the session network
// and waits until spec.Ready says it serves. On failure nothing is left
// running and the error carries the container's last output.
func (s *Session) Start(ctx context.Context, spec Spec) (*Container, error) {
	if spec.Name == "" || spec.Port <= 0 {
		return nil, errors.New("bench: container spec needs a Name and a Port")
	}
	if spec.Ready == nil {
		spec.Ready = TCPReady
	}
	if spec.StartTimeout <= 0 {
		spec.StartTimeout = DefaultStartTimeout
	}
	ip, err := s.nextIP()
	if err != nil {
		return nil, err
	}
	req := testcontainers.ContainerRequest{
		Image:    spec.Image.Ref,
		Name:     s.Network + "-" + spec.Name,
		Cmd:      spec.Cmd,
		Env:      spec.Env,
		Labels:   map[string]string{LabelProject: "1", LabelSession: s.ID, LabelName: spec.Name},
		Networks: []string{s.Network},
		// The fixed address survives kills and restarts, so clients
		// configured with Addr keep working across a failover.
		EndpointSettingsModifier: func(m map[string]*network.EndpointSettings) {
			if es := m[s.Network]; es != nil {
				es.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: ip}
			}
		},
	}
	if spec.StopSignal != "" {
		req.ConfigModifier = func(cfg *container.Config) { cfg.StopSignal = spec.StopSignal }
	}
	if len(spec.Sysctls) > 0 {
		req.HostConfigModifier = func(hc *container.HostConfig) { hc.Sysctls = spec.Sysctls }
	}
	if s.Path == PathPublished {
		for _, p := range append([]int{spec.Port}, spec.Ports...) {
			req.ExposedPorts = append(req.ExposedPorts, strconv.Itoa(p)+"/tcp")
		}
	}
	ctr, err := s.provider.CreateContainer(ctx, req)
	c := &Container{Name: spec.Name, IP: ip, Image: spec.Image, Path: s.Path, spec: spec, ctr: ctr, api: s.api, network: s.Network}
	if ctr != nil {
		c.ID = ctr.GetContainerID()
	}
	if err == nil {
		err = ctr.Start(ctx)
	}
	if err == nil {
		err = c.awaitReady(ctx)
	}
	if err == nil && s.isClosed() {
		// Close ran during the start and could not see this container.
		err = ErrSessionClosed
	}
	if err != nil {
		if c.ID != "" {
			err = errors.Join(err, c.Terminate(context.WithoutCancel(ctx)))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrSessionClosed) {
			return nil, err
		}
		return nil, fmt.Errorf("bench: start container %s (%s): %w", spec.Name, spec.Image.Ref, err)
	}
	return c, nil
}

// Addr is the host:port at which the bench process reaches Spec.Port.
func (c *Container) Addr() string { return c.AddrOf(c.spec.Port) }

// AddrOf is the host:port at which the bench process reaches port, one of
// Spec.Port and Spec.Ports; "" for another port in PathPublished mode.
func (c *Container) AddrOf(port int) string {
	if c.Path == PathDirect {
		return net.JoinHostPort(c.IP.String(), strconv.Itoa(port))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.published[port]
}

// Stop sends Spec.StopSignal (default SIGTERM) and waits for the
// container to exit, killing it after 10s. The container stays, for
// Restart.
func (c *Container) Stop(ctx context.Context) error {
	secs := int(stopTimeout / time.Second)
	if _, err := c.api.ContainerStop(ctx, c.ID, client.ContainerStopOptions{Timeout: &secs}); err != nil {
		return fmt.Errorf("bench: stop %s: %w", c.Name, err)
	}
	return nil
}

// Kill sends SIGKILL: the server dies at once, a crash. The container
// stays, for Restart.
func (c *Container) Kill(ctx context.Context) error {
	if _, err := c.api.ContainerKill(ctx, c.ID, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("bench: kill %s: %w", c.Name, err)
	}
	return nil
}

// Pause freezes every process of the container (cgroup freezer): its
// sockets stay open but nothing answers, like a long GC pause or SIGSTOP.
func (c *Container) Pause(ctx context.Context) error {
	if _, err := c.api.ContainerPause(ctx, c.ID, client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("bench: pause %s: %w", c.Name, err)
	}
	return nil
}

// Unpause thaws a paused container.
func (c *Container) Unpause(ctx context.Context) error {
	if _, err := c.api.ContainerUnpause(ctx, c.ID, client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("bench: unpause %s: %w", c.Name, err)
	}
	return nil
}

// Cut disconnects the container from the session network: its peers'
// packets go nowhere, as when a host drops off the network. Open
// connections are not reset; they time out.
func (c *Container) Cut(ctx context.Context) error {
	if _, err := c.api.NetworkDisconnect(ctx, c.network, client.NetworkDisconnectOptions{Container: c.ID, Force: true}); err != nil {
		return fmt.Errorf("bench: cut %s: %w", c.Name, err)
	}
	return nil
}

// Restore reconnects a cut container to the session network at its fixed
// address.
func (c *Container) Restore(ctx context.Context) error {
	_, err := c.api.NetworkConnect(ctx, c.network, client.NetworkConnectOptions{
		Container:      c.ID,
		EndpointConfig: &network.EndpointSettings{IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: c.IP}},
	})
	if err != nil {
		return fmt.Errorf("bench: restore %s: %w", c.Name, err)
	}
	return nil
}

// Restart starts the container again, after Stop or Kill (a running one
// is stopped first, a paused one thawed), and waits until it is ready.
// In PathDirect mode Addr does not change; in PathPublished mode it may.
func (c *Container) Restart(ctx context.Context) error {
	inspect, err := c.api.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("bench: restart %s: %w", c.Name, err)
	}
	if st := inspect.Container.State; st != nil && st.Paused {
		if err := c.Unpause(ctx); err != nil {
			return err
		}
	}
	secs := int(stopTimeout / time.Second)
	if _, err := c.api.ContainerRestart(ctx, c.ID, client.ContainerRestartOptions{Timeout: &secs}); err != nil {
		return fmt.Errorf("bench: restart %s: %w", c.Name, err)
	}
	if err := c.awaitReady(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("bench: restart %s: %w", c.Name, err)
	}
	return nil
}

// Terminate removes the container at once (SIGKILL, then remove).
// Removing one already gone is not an error.
func (c *Container) Terminate(ctx context.Context) error {
	if _, err := c.api.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("bench: remove %s: %w", c.Name, err)
	}
	return nil
}

// Stats is one sample of a container's resource use.
type Stats struct {
	// CPU is the CPU time all its processes used since it started.
	CPU time.Duration
	// MemoryBytes is its current memory use as the engine reports it.
	MemoryBytes uint64
}

// Stats samples the container's CPU time and memory once (no one-second
// wait). The CPU per operation of a phase is the difference of two samples.
func (c *Container) Stats(ctx context.Context) (Stats, error) {
	res, err := c.api.ContainerStats(ctx, c.ID, client.ContainerStatsOptions{})
	if err != nil {
		return Stats{}, fmt.Errorf("bench: stats %s: %w", c.Name, err)
	}
	defer res.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return Stats{}, fmt.Errorf("bench: stats %s: %w", c.Name, err)
	}
	return Stats{CPU: time.Duration(st.CPUStats.CPUUsage.TotalUsage), MemoryBytes: st.MemoryStats.Usage}, nil
}

// Logs returns what the container wrote to stdout and stderr, at most
// the last 64 KiB.
func (c *Container) Logs(ctx context.Context) (string, error) {
	rc, err := c.ctr.Logs(ctx)
	if err != nil {
		return "", fmt.Errorf("bench: logs of %s: %w", c.Name, err)
	}
	defer rc.Close()
	const keep = 64 << 10
	var buf []byte
	chunk := make([]byte, 32<<10)
	for {
		n, err := rc.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if len(buf) > 2*keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("bench: logs of %s: %w", c.Name, err)
		}
	}
	if len(buf) > keep {
		buf = buf[len(buf)-keep:]
	}
	return string(buf), nil
}

// awaitReady refreshes the published ports, then polls Spec.Ready until
// it succeeds, the container exits, or Spec.StartTimeout passes.
func (c *Container) awaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.spec.StartTimeout)
	defer cancel()
	if err := c.refreshPorts(ctx); err != nil {
		return err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := c.spec.Ready(ctx, c)
		if err == nil {
			return nil
		}
		inspect, ierr := c.api.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
		if ierr == nil && inspect.Container.State != nil && !inspect.Container.State.Running {
			return c.withLogs(fmt.Errorf("exited (code %d) before it was ready: %w", inspect.Container.State.ExitCode, err))
		}
		select {
		case <-ctx.Done():
			if parent := context.Cause(ctx); errors.Is(parent, context.Canceled) {
				return parent
			}
			return c.withLogs(fmt.Errorf("not ready after %s: %w", c.spec.StartTimeout, err))
		case <-tick.C:
		}
	}
}

// withLogs appends the container's output to err, for diagnosis.
func (c *Container) withLogs(err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	logs, lerr := c.Logs(ctx)
	if lerr != nil || logs == "" {
		return err
	}
	return fmt.Errorf("%w\ncontainer output:\n%s", err, logs)
}

// refreshPorts records where the published ports are mapped; a restart
// maps them anew.
func (c *Container) refreshPorts(ctx context.Context) error {
	if c.Path != PathPublished {
		return nil
	}
	host := publishedHost()
	published := map[int]string{}
	for _, p := range append([]int{c.spec.Port}, c.spec.Ports...) {
		mapped, err := c.ctr.MappedPort(ctx, strconv.Itoa(p)+"/tcp")
		if err != nil {
			return err
		}
		published[p] = net.JoinHostPort(host, mapped.Port())
	}
	c.mu.Lock()
	c.published = published
	c.mu.Unlock()
	return nil
}

// publishedHost is where published ports are reached: the host of a
// tcp:// DOCKER_HOST, else loopback (the engine is on this machine).
func publishedHost() string {
	if u, err := url.Parse(os.Getenv("DOCKER_HOST")); err == nil && u.Scheme == "tcp" && u.Hostname() != "" {
		return u.Hostname()
	}
	return "127.0.0.1"
}

// API is the engine client the container is driven with (for its stats,
// as bench/host reads them).
func (c *Container) API() client.APIClient { return c.api }

// PID is the host process id of the container's main process, as the
// engine reports it; /proc/<pid> shows it only when the engine runs on
// this host's PID namespace.
func (c *Container) PID(ctx context.Context) (int, error) {
	inspect, err := c.api.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
	if err != nil {
		return 0, fmt.Errorf("bench: inspect %s: %w", c.Name, err)
	}
	if st := inspect.Container.State; st != nil && st.Pid > 0 {
		return st.Pid, nil
	}
	return 0, fmt.Errorf("bench: %s has no running process", c.Name)
}
