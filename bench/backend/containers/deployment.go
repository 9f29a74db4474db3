// Package containers is the containers backend of the bench: it
// implements bench.Deployment over its engine package (images and
// containers through the Docker engine), starting the servers the
// contenders' specs describe on one session network, all reached the
// same way (the container IP without docker-proxy where the host routes
// to it).
package containers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/results"
)

// closeTimeout bounds the removal of the session's containers.
const closeTimeout = time.Minute

// Deployment is one container session. Its methods are safe for concurrent
// use.
type Deployment struct {
	session   *engine.Session
	mu        sync.Mutex
	specs     []string                  // in start order, for Describe
	servers   map[string][]bench.Server // of *server
	images    []results.Image
	sysctls   map[string]string // the specs' settings, for Describe
	engine    string
	shifted   int  // clock-shifted server sets started, for unique names
	onHosts   bool // StartOn with hosts: servers on emulated hosts
	closeOnce sync.Once
	closeErr  error
}

// Start builds (or reuses, by content hash) the images the specs need and
// starts their containers. On error everything started is removed again.
func Start(ctx context.Context, specs []*bench.ServerSpec) (*Deployment, error) {
	return StartOn(ctx, specs, nil, false)
}

// StartOn is Start with every container attached, as soon as it runs, to
// an emulated host that hosts reserves for it (its own namespace joined
// to a delay line): the bench reaches each server at its host's address,
// and cluster members reach each other at theirs, so every packet between
// them, SYN included, crosses the line. The session network stays for
// the engine's readiness checks. Nil hosts is Start. With record, each
// server runs with its spec's RecordArgs and hands its record back
// (bench.RecordFollower).
func StartOn(ctx context.Context, specs []*bench.ServerSpec, hosts Hosts, record bool) (_ *Deployment, err error) {
	s, err := engine.NewSession(ctx)
	if err != nil {
		return nil, err
	}
	d := &Deployment{session: s, servers: map[string][]bench.Server{}, sysctls: map[string]string{}, onHosts: hosts != nil}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if d.engine, err = s.EngineVersion(ctx); err != nil {
		return nil, err
	}
	images := map[string]engine.Image{} // by program: specs share images
	for _, spec := range specs {
		program := spec.GoPackage + spec.Executable
		img, ok := images[program]
		if !ok || spec.Image != nil {
			if img, err = Image(ctx, spec); err != nil {
				return nil, err
			}
			images[program] = img
			d.images = append(d.images, results.Image{Role: spec.Name, Ref: img.Ref, Source: img.Source})
		}
		// Every replica's host is reserved first, so that each member is
		// told its peers' addresses on the line.
		srvs := make([]*server, spec.Count())
		peers := make([]string, spec.Count())
		for i := range srvs {
			srvs[i] = &server{port: spec.Port, opsPort: spec.OpsPort, session: s, record: record && len(spec.RecordArgs) > 0}
			peers[i] = peerNames(s.Network, spec)[i]
			if hosts != nil {
				if srvs[i].host, err = hosts(ctx, spec.ServerName(i)); err != nil {
					return nil, fmt.Errorf("containers: a host for %s: %w", spec.ServerName(i), err)
				}
				peers[i] = srvs[i].host.IP().String()
			}
		}
		// The replicas start concurrently: a cluster member is ready
		// only once a quorum runs.
		ctrs := make([]bench.Server, spec.Count())
		errs := make([]error, spec.Count())
		var wg sync.WaitGroup
		for i := range ctrs {
			wg.Go(func() {
				srv := srvs[i]
				cs := containerSpec(spec, i, img, peers)
				if srv.record {
					cs.Cmd = append(cs.Cmd, spec.RecordArgs...)
				}
				if srv.host != nil {
					cs.Ready = srv.attachOnStart(cs.Ready)
				}
				if srv.c, errs[i] = s.Start(ctx, cs); errs[i] == nil {
					ctrs[i] = srv
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		d.mu.Lock()
		d.servers[spec.Name] = ctrs
		d.mu.Unlock()
		d.specs = append(d.specs, spec.Name)
		for k, v := range spec.Sysctls {
			d.sysctls[spec.Name+": "+k] = v + " (set in the server container's network namespace)"
		}
	}
	return d, nil
}

// Image builds or finds the image of spec: its own Image hook's, else its
// GoPackage as a static binary in a scratch image, else its Executable's
// image.
func Image(ctx context.Context, spec *bench.ServerSpec) (engine.Image, error) {
	if spec.Image != nil {
		img, err := spec.Image(ctx)
		return engine.Image(img), err
	}
	if spec.GoPackage != "" {
		img, err := engine.BuildGoImage(ctx, spec.GoPackage, spec.Name)
		img.Source += ", static binary FROM scratch"
		return img, err
	}
	return engine.FindImage(ctx, programOf(spec))
}

func programOf(spec *bench.ServerSpec) engine.ProgramImage {
	return engine.ProgramImage{
		Executable: spec.Executable, Env: spec.ImageEnv,
		Registry: spec.RegistryImage, HostDockerfile: spec.HostDockerfile,
	}
}

// containerSpec is server i of spec in a container on the session
// network: listening on all interfaces at the spec's ports; its peers
// reach it at peers[i], its container name or its emulated host's
// address, known before it starts. An image with an entrypoint (the
// static Go images, an Image hook's) takes the arguments alone as its
// command.
func containerSpec(spec *bench.ServerSpec, i int, img engine.Image, peers []string) engine.Spec {
	var ports []int
	if spec.OpsPort != 0 {
		ports = []int{spec.OpsPort}
	}
	cmd := spec.ImageCommand(i, peers)
	cs := engine.Spec{Name: spec.ServerName(i), Image: img, Cmd: cmd, Port: spec.Port, Ports: ports, Sysctls: spec.Sysctls,
		StopSignal: unix.SignalName(spec.GracefulSignal()), Ready: engine.TCPReady}
	if spec.Ready != nil {
		cs.Ready = func(ctx context.Context, c *engine.Container) error {
			if err := engine.TCPReady(ctx, c); err != nil {
				return err
			}
			return spec.Ready(ctx, c.Addr(), opsAddr(c, spec.OpsPort))
		}
	}
	return cs
}

// peerNames are the container names of spec's replicas on the session
// network: the session names a container <network>-<name>.
func peerNames(network string, spec *bench.ServerSpec) []string {
	names := make([]string, spec.Count())
	for i := range names {
		names[i] = network + "-" + spec.ServerName(i)
	}
	return names
}

func opsAddr(c *engine.Container, port int) string {
	if port == 0 {
		return ""
	}
	return c.AddrOf(port)
}

// Servers implements bench.Deployment.
func (d *Deployment) Servers(spec string) []bench.Server {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.servers[spec])
}

// server is one container as a bench.Server.
type server struct {
	c       *engine.Container
	port    int
	opsPort int
	session *engine.Session
	record  bool // started with its spec's RecordArgs

	mu       sync.Mutex
	host     Host         // the emulated host, nil on the session network alone
	attached int          // the process whose namespace the host has
	addrs    []netip.Addr // Destinations: the container's own address, then extra ones
}

// Footprint implements bench.FootprintReader: the container's cgroup memory
// and CPU, read on the host where the engine runs here (the scale
// scenario samples every few hundred milliseconds), else from the
// engine's stats (one-shot, about a second per call).
func (s *server) Footprint(ctx context.Context) (bench.Footprint, error) {
	if m, err := host.CgroupMemory(s.c.ID); err == nil {
		if cpu, err := host.CgroupCPU(s.c.ID); err == nil {
			return bench.Footprint{Memory: m, CPU: cpu}, nil
		}
	}
	return engineFootprint(ctx, s.c.API(), s.c.ID)
}

// FileLimits implements bench.LimitReader: the RLIMIT_NOFILE of the
// container's main process, read through /proc where the engine runs on
// this host.
func (s *server) FileLimits(ctx context.Context) (bench.FileLimits, error) {
	pid, err := s.c.PID(ctx)
	if err != nil {
		return bench.FileLimits{}, err
	}
	return host.ProcessFileLimits(pid, s.c.Name)
}

// Destinations implements bench.Multihomed: the container's address,
// then addresses on extra session networks (engine.Session.ExtraAddr),
// made on first need and kept.
func (s *server) Destinations(ctx context.Context, n int) ([]netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.host != nil {
		if n > 1 {
			return nil, errOneAddress
		}
		return []netip.Addr{s.host.IP()}, nil
	}
	if len(s.addrs) == 0 {
		s.addrs = []netip.Addr{s.c.IP}
	}
	for len(s.addrs) < n {
		a, err := s.session.ExtraAddr(ctx, s.c)
		if err != nil {
			return nil, err
		}
		s.addrs = append(s.addrs, a)
	}
	return slices.Clone(s.addrs[:n]), nil
}

// FollowRecord implements bench.RecordFollower: the container's standard
// output, through the engine's log stream.
func (s *server) FollowRecord(ctx context.Context, since time.Time, started func(from time.Time), line func([]byte)) error {
	if !s.record {
		return bench.ErrNotRecording
	}
	err := s.c.FollowStdout(ctx, since, started, line)
	if errors.Is(err, engine.ErrNotRunning) {
		return bench.ErrNotRunning
	}
	return err
}

func (s *server) Name() string                      { return s.c.Name }
func (s *server) Kill(ctx context.Context) error    { return s.c.Kill(ctx) }
func (s *server) Stop(ctx context.Context) error    { return s.c.Stop(ctx) }
func (s *server) Pause(ctx context.Context) error   { return s.c.Pause(ctx) }
func (s *server) Unpause(ctx context.Context) error { return s.c.Unpause(ctx) }

// Addr implements bench.Server: the address on the server's emulated
// host when it has one, else the container's.
func (s *server) Addr() string {
	if h := s.onHost(); h != nil {
		return hostAddr(h, s.port)
	}
	return s.c.Addr()
}

// OpsAddr implements bench.Server, as Addr.
func (s *server) OpsAddr() string {
	if h := s.onHost(); h != nil && s.opsPort != 0 {
		return hostAddr(h, s.opsPort)
	}
	return opsAddr(s.c, s.opsPort)
}

// Restart implements bench.Server; a server on an emulated host keeps its
// address there (the new namespace is attached before it is ready).
func (s *server) Restart(ctx context.Context) error { return s.c.Restart(ctx) }

// Cut implements bench.Server.
func (s *server) Cut(ctx context.Context) error {
	if h := s.onHost(); h != nil {
		return s.cutOnHost(ctx, h, true)
	}
	return s.c.Cut(ctx)
}

// Restore implements bench.Server.
func (s *server) Restore(ctx context.Context) error {
	if h := s.onHost(); h != nil {
		return s.cutOnHost(ctx, h, false)
	}
	return s.c.Restore(ctx)
}

// CPU implements bench.Server: the container's CPU time from its cgroup.
// When the engine runs on this host the cgroup files are read directly
// (microseconds); otherwise the engine's stats API is asked, which costs
// about a second per call.
func (s *server) CPU(ctx context.Context) (time.Duration, string, bool, error) {
	if cpu, err := host.CgroupCPU(s.c.ID); err == nil {
		return cpu, "cgroup " + cgroupSourceNote, true, nil
	}
	st, err := s.c.Stats(ctx)
	if err != nil {
		return 0, "", false, err
	}
	return st.CPU, "container cgroup CPU usage (engine stats API)", true, nil
}

const cgroupSourceNote = "cpuacct.usage / cpu.stat usage_usec of the container, read on the host"

// Describe implements bench.Deployment.
func (d *Deployment) Describe(env *results.Environment) {
	env.Backend = "containers"
	env.NetworkPath = d.session.Path + " (network " + d.session.Network + ")"
	if d.onHosts {
		env.NetworkPath = "emulated hosts: every server container's own network namespace attached to the delay line, reached through it by the bench and by its cluster peers; the session network " + d.session.Network + " carries the engine's readiness checks only"
	}
	env.DockerVersion = d.engine
	d.mu.Lock()
	defer d.mu.Unlock()
	env.Images = append(env.Images, d.images...)
	if len(d.sysctls) > 0 && env.Sysctls == nil {
		env.Sysctls = map[string]string{}
	}
	maps.Copy(env.Sysctls, d.sysctls)
	for _, spec := range d.specs {
		for _, s := range d.servers[spec] {
			env.Servers = append(env.Servers, results.Server{Role: s.Name(), Address: s.Addr()})
		}
	}
}

// Close removes every container and the network of the session, with its
// own timeout so that it also works after Ctrl-C. Safe to call twice.
func (d *Deployment) Close() error {
	d.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		d.closeErr = d.session.Close(ctx)
	})
	return d.closeErr
}

// StartClockShifted implements bench.ClockShifter: spec's Executable from
// the host, packaged with the clockshift interposer
// (engine.ClockShiftImage), in new containers of the session named
// <server>-shifted-<n>. A Go server is a static binary the interposer does
// not reach, so it is refused.
func (d *Deployment) StartClockShifted(ctx context.Context, spec *bench.ServerSpec) ([]bench.ClockShiftedServer, func(), error) {
	if spec.GoPackage != "" || spec.Image != nil || spec.Executable == "" {
		return nil, nil, fmt.Errorf("%w: %s is not a host executable the clockshift image can package", bench.ErrNotSupported, spec.Name)
	}
	img, err := engine.ClockShiftImage(ctx, engine.ProgramImage{Executable: spec.Executable, HostDockerfile: spec.HostDockerfile})
	if err != nil {
		return nil, nil, err
	}
	var started []*engine.Container
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		for _, c := range started {
			_ = c.Terminate(ctx)
		}
	}
	d.mu.Lock()
	d.shifted++
	n := d.shifted
	d.mu.Unlock()
	var out []bench.ClockShiftedServer
	for i := range spec.Count() {
		cs := containerSpec(spec, i, img, peerNames(d.session.Network, spec))
		cs.Name = fmt.Sprintf("%s-shifted-%d", cs.Name, n)
		c, err := d.session.Start(ctx, cs)
		if err != nil {
			stop()
			return nil, nil, err
		}
		started = append(started, c)
		out = append(out, shiftedServer{&server{c: c, port: spec.Port, opsPort: spec.OpsPort}})
	}
	return out, stop, nil
}

// shiftedServer is a container from ClockShiftImage.
type shiftedServer struct{ *server }

func (s shiftedServer) ShiftClock(ctx context.Context, d time.Duration) error {
	return s.c.ShiftClock(ctx, d)
}
