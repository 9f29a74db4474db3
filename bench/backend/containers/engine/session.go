package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// How a Session's containers are reached, as reported in Path.
const (
	PathDirect    = "container IP on bridge network, no docker-proxy"
	PathPublished = "published port via docker-proxy"
)

// PublishEnv names the environment variable that, set to 1, makes
// sessions reach containers through published ports even where the
// host routes to their network.
const PublishEnv = "MONOLOCK_BENCH_PUBLISH_PORTS"

// Session is one run's set of containers on its own bridge network.
// Close removes them all; so does RemoveAll. Methods are safe for
// concurrent use.
type Session struct {
	// ID is random and labels the session's containers and network.
	ID string
	// Network is the name of the session's bridge network.
	Network string
	// Path says how container addresses are reached: PathDirect or
	// PathPublished.
	Path string

	provider *testcontainers.DockerProvider
	// api is the engine client behind provider, closed by Close only.
	api     client.APIClient
	gateway netip.Addr

	mu     sync.Mutex
	lastIP netip.Addr
	closed bool
	extra  int // extra networks made by ExtraAddr
}

// NewSession connects to the Docker engine and creates the session's
// network. Its containers get fixed addresses on it, so a restarted
// container keeps its address.
func NewSession(ctx context.Context) (*Session, error) {
	p, err := healthyProvider(ctx)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	s := &Session{ID: hex.EncodeToString(b[:]), provider: p, api: p.Client()}
	// testcontainers closes its provider's client after a container's
	// Start, Logs and port lookup. Closing drops the idle connections
	// of the one client every goroutine of the session shares, and a
	// request that had just taken one could fail ("CloseIdleConnections
	// called"). The provider gets a client whose Close does nothing;
	// the session closes the real one.
	p.SetClient(openClient{s.api})
	removed, err := removeOrphans(ctx, s.api)
	if len(removed) > 0 || err != nil {
		slog.Warn("bench: removed the containers of sessions whose process ended without closing them", "removed", removed, "error", err)
	}
	s.Network = "monolock-bench-" + s.ID
	if err := s.createNetwork(ctx); err != nil {
		s.api.Close()
		return nil, err
	}
	s.lastIP = s.gateway
	s.Path = PathPublished
	if os.Getenv(PublishEnv) != "1" && hostHasAddr(s.gateway) {
		// The engine gave the host an address on the bridge, so the
		// host routes to the containers' addresses directly.
		s.Path = PathDirect
	}
	return s, nil
}

// createNetwork makes the session's bridge network with a subnet set
// explicitly, which Docker requires for fixed container addresses. The
// subnet is the one the engine picks for a throw-away network, so it
// does not collide with the host's; another process may take it in
// between, hence the retries.
func (s *Session) createNetwork(ctx context.Context) error {
	api := s.api
	labels := s.networkLabels()
	var lastErr error
	for range 3 {
		probe, err := api.NetworkCreate(ctx, s.Network, client.NetworkCreateOptions{Driver: "bridge", Labels: labels})
		if err != nil {
			return fmt.Errorf("bench: create network: %w", err)
		}
		inspect, err := api.NetworkInspect(ctx, probe.ID, client.NetworkInspectOptions{})
		_, rmErr := api.NetworkRemove(ctx, probe.ID, client.NetworkRemoveOptions{})
		if err != nil || rmErr != nil {
			return fmt.Errorf("bench: create network: %w", errors.Join(err, rmErr))
		}
		var cfg network.IPAMConfig
		for _, c := range inspect.Network.IPAM.Config {
			if c.Subnet.Addr().Is4() {
				cfg = c
				break
			}
		}
		if !cfg.Subnet.IsValid() {
			return errors.New("bench: create network: the engine assigned no IPv4 subnet")
		}
		if !cfg.Gateway.IsValid() {
			cfg.Gateway = cfg.Subnet.Masked().Addr().Next()
		}
		_, err = api.NetworkCreate(ctx, s.Network, client.NetworkCreateOptions{
			Driver: "bridge",
			Labels: labels,
			IPAM:   &network.IPAM{Config: []network.IPAMConfig{{Subnet: cfg.Subnet, Gateway: cfg.Gateway}}},
		})
		if err == nil {
			s.gateway = cfg.Gateway
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		lastErr = err
	}
	return fmt.Errorf("bench: create network: %w", lastErr)
}

// EngineVersion returns the Docker engine's version and API version, for
// the report ("20.10.24+dfsg1 (API 1.41)").
func (s *Session) EngineVersion(ctx context.Context) (string, error) {
	v, err := s.api.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return "", fmt.Errorf("bench: docker version: %w", err)
	}
	return fmt.Sprintf("%s (API %s)", v.Version, v.APIVersion), nil
}

// networkLabels are the labels of the session's networks: the project's,
// the session's and, where /proc tells, its owner process's.
func (s *Session) networkLabels() map[string]string {
	labels := map[string]string{LabelProject: "1", LabelSession: s.ID}
	if o, ok := processOwner(os.Getpid()); ok {
		labels[LabelOwner] = o.String()
	}
	return labels
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close terminates every container of the session, including any a
// failed start left behind, and removes its network. It is safe to call
// more than once and from a Ctrl-C handler (give it a fresh context).
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	err := removeLabelled(ctx, s.api, LabelSession+"="+s.ID, false)
	s.api.Close()
	return err
}

// openClient is an engine client whose Close leaves its connections open,
// for the provider a Session shares among its goroutines.
type openClient struct{ client.APIClient }

func (openClient) Close() error { return nil }

// nextIP hands out the session's fixed container addresses in order; it
// fails once the session is closed.
func (s *Session) nextIP() (netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return netip.Addr{}, ErrSessionClosed
	}
	s.lastIP = s.lastIP.Next()
	return s.lastIP, nil
}

// RemoveAll removes every container, network and image that carries the
// project label (any session's, and images built here), as `make clean`
// does. Images not built here (named in the environment, pulled from a registry) are kept.
// The error wraps ErrNoEngine when no Docker engine answers.
func RemoveAll(ctx context.Context) error {
	p, err := healthyProvider(ctx)
	if err != nil {
		return err
	}
	defer p.Close()
	return removeLabelled(ctx, p.Client(), LabelProject+"=1", true)
}

// removeLabelled force-removes the containers and networks matching the
// label filter ("key=value"), then, if images is set, the images.
func removeLabelled(ctx context.Context, api client.APIClient, label string, images bool) error {
	filter := make(client.Filters).Add("label", label)
	var errs []error
	ctrs, err := api.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: filter})
	errs = append(errs, err)
	for _, c := range ctrs.Items {
		_, err := api.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if !errdefs.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	nets, err := api.NetworkList(ctx, client.NetworkListOptions{Filters: filter})
	errs = append(errs, err)
	for _, n := range nets.Items {
		_, err := api.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		if !errdefs.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if images {
		imgs, err := api.ImageList(ctx, client.ImageListOptions{All: true, Filters: filter})
		errs = append(errs, err)
		for _, img := range imgs.Items {
			_, err := api.ImageRemove(ctx, img.ID, client.ImageRemoveOptions{Force: true, PruneChildren: true})
			if !errdefs.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bench: remove %s: %w", label, err)
	}
	return nil
}

// hostHasAddr reports whether ip is assigned to one of the host's
// interfaces.
func hostHasAddr(ip netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if addr, ok := netip.AddrFromSlice(n.IP); ok && addr.Unmap() == ip {
				return true
			}
		}
	}
	return false
}

// ExtraAddr gives c one more address: it creates another bridge network
// of the session (removed with it) and connects c to it. Each address is
// another destination for clients, so one host can open another
// ephemeral port range's worth of connections to c (bench/load/spreaddial).
// In PathPublished mode the address is not reachable from the host.
func (s *Session) ExtraAddr(ctx context.Context, c *Container) (netip.Addr, error) {
	api := s.api
	s.mu.Lock()
	s.extra++
	name := fmt.Sprintf("%s-x%d", s.Network, s.extra)
	s.mu.Unlock()
	if _, err := api.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge", Labels: s.networkLabels()}); err != nil {
		return netip.Addr{}, fmt.Errorf("bench: create network %s: %w", name, err)
	}
	if _, err := api.NetworkConnect(ctx, name, client.NetworkConnectOptions{Container: c.ID}); err != nil {
		return netip.Addr{}, fmt.Errorf("bench: connect %s to %s: %w", c.Name, name, err)
	}
	inspect, err := api.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
	if err != nil {
		return netip.Addr{}, fmt.Errorf("bench: inspect %s: %w", c.Name, err)
	}
	if ns := inspect.Container.NetworkSettings; ns != nil {
		if es := ns.Networks[name]; es != nil && es.IPAddress.IsValid() {
			return es.IPAddress, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("bench: %s has no address on %s", c.Name, name)
}
