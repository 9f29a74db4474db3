package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// ServerSpec describes one kind of server a contender needs, completely
// enough for every backend to start it without knowing the contender: how
// its program is had, its arguments, ports, replica count and readiness.
// Contenders that share servers (a lock, its waiting-strategy variant and
// its floor) name the same ServerSpec value.
type ServerSpec struct {
	// Name identifies the spec in a Deployment and names its servers in
	// results: Name alone with one replica, Name-1 … Name-N with more.
	Name string
	// Replicas is the number of independent servers; default 1.
	Replicas int
	// Flag is the stem of the `run` flags that give external addresses
	// (--<Flag>-addr, or --<Flag>-addrs with replicas; --<Flag>-ops-addr)
	// and a prebuilt binary (--<Flag>-bin); default Name.
	Flag string

	// GoPackage is the import path of a main package of this module: the
	// local backend builds it with go build, the containers backend puts
	// the static binary alone in a scratch image as its entrypoint.
	GoPackage string
	// Executable is a program found on PATH, used when GoPackage is empty:
	// the local backend runs it; the containers backend runs it from the
	// image named by the environment variable ImageEnv, else from
	// RegistryImage if it can be pulled within seconds, else from the
	// host's executable and its shared libraries packaged with
	// HostDockerfile (a Dockerfile copying rootfs/ into an empty image).
	Executable                              string
	ImageEnv, RegistryImage, HostDockerfile string
	// Command, when set, replaces GoPackage and Executable on the local
	// backend: it prepares what the server needs in a.Dir (a data
	// directory, a build) and returns the whole command line, program
	// first; Args is then not called there. It runs before every start
	// of a replica, so a build it does must be cached.
	Command func(ctx context.Context, a ServerArgs) ([]string, error)
	// Image, when set, replaces GoPackage and Executable on the
	// containers backend: it builds or finds the image (a program the
	// contender package builds itself); the container's command is Args.
	Image func(ctx context.Context) (Image, error)

	// Args returns the server's arguments (without the program name).
	Args func(ServerArgs) []string
	// Port is the server's port inside a container; OpsPort, when
	// nonzero, its operations port (an HTTP endpoint with health and
	// metrics).
	Port, OpsPort int
	// PeerPort, when nonzero, is the port replicas reach each other on
	// inside their containers (a cluster's peer port); the backends then
	// give Args the peer addresses of all replicas before any starts.
	PeerPort int
	// Ready, when set, reports whether a server that accepts TCP
	// connections also serves (nil when it does). It is polled; one call
	// should be short.
	Ready func(ctx context.Context, addr, opsAddr string) error
	// Version, when set, asks a running server for its version, for the
	// report.
	Version func(ctx context.Context, addr string) (string, error)
	// WallClockExpiry says the server expires leases on the wall clock it
	// reads through libc, so that a clock interposer can make them expire
	// early: the clock-jump variants apply to it. Default false (leases on
	// a monotonic clock, or a static binary no interposer reaches).
	WallClockExpiry bool
	// Sysctls are namespaced kernel settings the server needs
	// ("net.ipv4.tcp_fastopen": "3"). The containers backend sets them in
	// the server container's network namespace; the local backend never
	// changes the host's settings and records where they differ.
	Sysctls map[string]string
	// StopSignal is the signal of a graceful shutdown (Server.Stop, and
	// the stop before a Restart of a running server); default SIGTERM. A
	// server whose SIGTERM does not shut it down promptly names the one
	// its own tools use (PostgreSQL: SIGINT, pg_ctl's fast shutdown).
	StopSignal syscall.Signal
	// RecordArgs, when set, are arguments that make the server write its
	// own record of every lock's changes (grants and ends) to its standard
	// output, a line each (monolock: its audit log). A backend adds them
	// only to a deployment started to record (a run of the chaos scenario
	// alone, whose watcher reads them back, RecordFollower): writing the
	// record costs the server work that every other figure would carry.
	RecordArgs []string
}

// GracefulSignal returns StopSignal, or SIGTERM when it is unset.
func (s *ServerSpec) GracefulSignal() syscall.Signal {
	if s.StopSignal != 0 {
		return s.StopSignal
	}
	return syscall.SIGTERM
}

// ServerArgs is what a backend tells ServerSpec.Args.
type ServerArgs struct {
	// Listen is the host:port to listen on, Ops the operations host:port
	// ("" without an OpsPort).
	Listen, Ops string
	// Dir is a writable directory of the server's own, or "" when the
	// backend provides none (containers: the image's working directory).
	Dir string
	// Replica is the server's 0-based index among the spec's replicas.
	Replica int
	// With a PeerPort: PeerListen is the host:port to listen on for
	// peers, and Peers the host:port every replica's peers reach it at,
	// indexed by replica (Peers[Replica] is this server's). A server
	// reached at a peer's host also answers clients there on its Port.
	PeerListen string
	Peers      []string
}

// ImageCommand is the command of replica i in an image of the spec, as
// the containers and kubernetes backends run it: listening on every
// interface at the spec's ports, its peers at peers (their hosts, one per
// replica, known before any starts). An image with an entrypoint (the
// static Go images, an Image hook's) takes it as its arguments; an
// Executable's image runs the Executable first.
func (s *ServerSpec) ImageCommand(i int, peers []string) []string {
	args := ServerArgs{Listen: "0.0.0.0:" + strconv.Itoa(s.Port), Replica: i}
	if s.OpsPort != 0 {
		args.Ops = "0.0.0.0:" + strconv.Itoa(s.OpsPort)
	}
	if s.PeerPort != 0 {
		args.PeerListen = "0.0.0.0:" + strconv.Itoa(s.PeerPort)
		for _, p := range peers {
			args.Peers = append(args.Peers, net.JoinHostPort(p, strconv.Itoa(s.PeerPort)))
		}
	}
	cmd := s.Args(args)
	if s.GoPackage == "" && s.Image == nil {
		cmd = append([]string{s.Executable}, cmd...)
	}
	return cmd
}

// Count returns the number of servers of the spec.
func (s *ServerSpec) Count() int { return max(s.Replicas, 1) }

// ServerName returns the name of the i-th (0-based) server of the spec.
func (s *ServerSpec) ServerName(i int) string {
	if s.Count() == 1 {
		return s.Name
	}
	return fmt.Sprintf("%s-%d", s.Name, i+1)
}

// FlagStem returns Flag, or Name when Flag is empty.
func (s *ServerSpec) FlagStem() string {
	if s.Flag != "" {
		return s.Flag
	}
	return s.Name
}

// Image is a container image the containers backend can run, as a
// ServerSpec's Image hook returns it.
type Image struct {
	// Ref is the reference containers are created from, e.g.
	// "monolock-bench/etcd:0123456789abcdef0123".
	Ref string
	// Source says where the image came from, for the report ("build
	// <package>", "host-<executable> <version>", ...).
	Source string
	// Built is true when this call built the image, false when an image
	// with the same content hash was already there and is reused.
	Built bool
}

// ErrNotSupported is wrapped by the fault operations of a backend that
// cannot act on its servers (external).
var ErrNotSupported = errors.New("bench: not supported by this backend")

// Server is one running server of a Deployment. Its methods are safe for
// concurrent use. The fault operations act on the real server: a backend
// that cannot returns an error wrapping ErrNotSupported.
type Server interface {
	// Name is the server's name (ServerSpec.ServerName).
	Name() string
	// Addr is the host:port the bench reaches the server at; it stays the
	// same across Restart.
	Addr() string
	// OpsAddr is the host:port of its operations port, or "" when it has
	// none or the backend cannot reach it.
	OpsAddr() string
	// CPU returns the CPU time the server has used so far and how it was
	// read; ok is false when the backend cannot see it.
	CPU(ctx context.Context) (cpu time.Duration, source string, ok bool, err error)

	// Kill sends SIGKILL: a crash.
	Kill(ctx context.Context) error
	// Stop sends the spec's GracefulSignal and waits for the server to
	// exit (killing it after a grace period): a graceful shutdown.
	Stop(ctx context.Context) error
	// Restart starts the server again on the same address (a running one
	// is stopped first, a paused one resumed) and waits until it serves.
	Restart(ctx context.Context) error
	// Pause freezes the server's processes (sockets open, nothing
	// answers); Unpause thaws them.
	Pause(ctx context.Context) error
	Unpause(ctx context.Context) error
	// Cut disconnects the server from the network; Restore reconnects it
	// on the same address.
	Cut(ctx context.Context) error
	Restore(ctx context.Context) error
}

// Deployment is a set of running servers handed to the runner by a backend
// (containers, local child processes, or external addresses).
type Deployment interface {
	// Servers returns the servers of the spec named spec, in a stable
	// order (index i is ServerName(i)), or nil when the deployment has
	// none.
	Servers(spec string) []Server
	// Describe fills the backend's part of the environment: backend name,
	// network path, images, Docker version, servers.
	Describe(env *results.Environment)
	// Close stops every server the deployment started and removes what it
	// created. It is safe to call more than once.
	Close() error
}

// ErrNoServers is wrapped when a contender's servers are missing from the
// deployment (run.CheckDeployment) or a list of servers is empty.
var ErrNoServers = errors.New("bench: no servers for spec")

// Addrs returns the addresses of servers.
func Addrs(servers []Server) []string {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr()
	}
	return addrs
}

// ServerCPU returns the summed CPU time of servers and how it was read; ok
// is false when the backend cannot see one of them.
func ServerCPU(ctx context.Context, servers []Server) (time.Duration, string, bool, error) {
	if len(servers) == 0 {
		return 0, "", false, ErrNoServers
	}
	var sum time.Duration
	var source string
	for _, s := range servers {
		cpu, src, ok, err := s.CPU(ctx)
		if err != nil || !ok {
			return 0, src, false, err
		}
		sum, source = sum+cpu, src
	}
	return sum, source, true, nil
}

// Specs returns the distinct server specs of contenders, in order of first
// use. Two different specs with one name are an error.
func Specs(contenders []Contender) ([]*ServerSpec, error) {
	var specs []*ServerSpec
	seen := map[string]*ServerSpec{}
	for _, c := range contenders {
		s := c.Server
		if s == nil {
			return nil, fmt.Errorf("bench: contender %s names no server spec", c.Name)
		}
		switch prev, ok := seen[s.Name]; {
		case !ok:
			seen[s.Name] = s
			specs = append(specs, s)
		case prev != s:
			return nil, fmt.Errorf("bench: two server specs are named %q", s.Name)
		}
	}
	return specs, nil
}
