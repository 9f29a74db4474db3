// Package localcluster runs a single-node Kubernetes cluster on this
// machine, built offline: the control plane, kubelet and kubectl compiled
// from the Go module proxy (Build), a containerd of its own beside the
// host's, the bridge CNI plugin, and etcd. Up starts it as detached
// processes that outlive the caller; Running finds one already up; Down
// removes everything it made, on the host too (mounts, links, iptables
// rules, cgroups, sysctls). It needs root and Linux.
//
// The cluster keeps all its files in one state dir (DefaultStateDir), and
// one cluster runs per state dir. Up and Down lock the state dir's parent
// directory, so concurrent callers (parallel test processes) take turns.
package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Component names: of processes, pid files and logs.
const (
	compContainerd        = "containerd"
	compEtcd              = "etcd"
	compAPIServer         = "kube-apiserver"
	compControllerManager = "kube-controller-manager"
	compScheduler         = "kube-scheduler"
	compKubelet           = "kubelet"
)

// components are in start order; Down stops them in reverse, kubelet
// first.
var components = []string{compContainerd, compEtcd, compAPIServer, compControllerManager, compScheduler, compKubelet}

// ErrNotRoot is returned by Up and Down when the process is not root.
var ErrNotRoot = errors.New("localcluster: starting or stopping a cluster needs root")

// Options configure Up.
type Options struct {
	// BinDir holds the Kubernetes binaries and the pause program: Build's
	// result. Required.
	BinDir string
	// Etcd is the etcd server binary (the bench's etcd contender builds
	// one: etcd.BuildServer). Required.
	Etcd string
	// StateDir holds everything the cluster writes. Default
	// DefaultStateDir.
	StateDir string
	// Containerd is the containerd binary, 1.6 or later with the CRI
	// plugin. Default /usr/bin/containerd. Its shim
	// (containerd-shim-runc-v2) and runc are found on PATH.
	Containerd string
	// Ctr is containerd's CLI, used to import images. Default
	// /usr/bin/ctr.
	Ctr string
	// KeepOnFailure leaves a cluster that failed to start as it is, for
	// its logs; Down removes it. Default false: Up removes it.
	KeepOnFailure bool
	// Log receives progress. Default slog.Default().
	Log *slog.Logger
}

func (o *Options) defaults() {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir
	}
	if o.Containerd == "" {
		o.Containerd = "/usr/bin/containerd"
	}
	if o.Ctr == "" {
		o.Ctr = "/usr/bin/ctr"
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
}

// Cluster is a running cluster. Its methods are safe for concurrent use.
type Cluster struct {
	l    layout
	info clusterInfo
	log  *slog.Logger
}

// clusterInfo is cluster.json: what a later process needs to use the
// cluster.
type clusterInfo struct {
	// Server is the apiserver's URL.
	Server string `json:"server"`
	// BinDir holds kubectl.
	BinDir string `json:"binDir"`
	// Ctr is containerd's CLI.
	Ctr string `json:"ctr"`
	// Started is when Up finished.
	Started time.Time `json:"started"`
}

// Kubeconfig returns the path of the admin kubeconfig (user in
// system:masters), for kubectl and client libraries.
func (c *Cluster) Kubeconfig() string { return c.l.kubeconfig("admin") }

// ContainerdSocket returns the path of the node's containerd socket.
func (c *Cluster) ContainerdSocket() string { return c.l.containerdSocket() }

// Server returns the apiserver's URL (https://127.0.0.1:<port>).
func (c *Cluster) Server() string { return c.info.Server }

// StateDir returns the directory that holds the cluster's files.
func (c *Cluster) StateDir() string { return c.l.dir }

// Kubectl returns the path of the kubectl binary the cluster was built
// with.
func (c *Cluster) Kubectl() string { return filepath.Join(c.info.BinDir, "kubectl") }

// Started returns when the cluster finished starting.
func (c *Cluster) Started() time.Time { return c.info.Started }

// BenchHost is this host's address on the pods' bridge, which pods reach
// it at: PodSubnet's first address.
func (c *Cluster) BenchHost() string {
	return netip.MustParsePrefix(PodSubnet).Addr().Next().String()
}

// Down stops the cluster and removes everything it made (see Down).
func (c *Cluster) Down(ctx context.Context) error { return Down(ctx, c.l.dir, c.log) }

// Up starts a cluster in opts.StateDir, or returns the one running
// there. What a previous, failed or half-stopped, cluster left in the
// state dir is removed first (Down). It returns when the node is Ready
// and a probe pod of the pause image ran with a pod IP this host routes
// to; the probe pod is deleted. A start takes about 15 seconds on two
// cores.
func Up(ctx context.Context, opts Options) (*Cluster, error) {
	opts.defaults()
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	for _, f := range []string{filepath.Join(opts.BinDir, "kubelet"), opts.Etcd, opts.Containerd, opts.Ctr} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("localcluster: %w", err)
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, plugin)); err != nil {
			return nil, fmt.Errorf("localcluster: the CNI plugin %s is missing (Debian: apt-get install containernetworking-plugins; make cluster installs it): %w", plugin, err)
		}
	}
	l := layout{dir: filepath.Clean(opts.StateDir)}
	unlock, err := lockStateDir(l)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if c, ok, err := running(ctx, l, opts.Log); err != nil {
		return nil, err
	} else if ok {
		opts.Log.Info("localcluster: a cluster is running already", "state", l.dir, "started", c.info.Started.Format(time.RFC3339))
		return c, nil
	}
	if _, err := os.Stat(l.dir); err == nil {
		opts.Log.Info("localcluster: removing what a previous cluster left", "state", l.dir)
		if err := down(ctx, l, opts.Log); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	c, err := up(ctx, l, opts)
	if err != nil {
		if opts.KeepOnFailure {
			return nil, fmt.Errorf("%w (kept for its logs in %s: remove with Down)", err, l.dir)
		}
		// A fresh context: ctx may be what ended the start.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if derr := down(cleanup, l, opts.Log); derr != nil {
			return nil, errors.Join(err, derr)
		}
		return nil, err
	}
	opts.Log.Info("localcluster: cluster up", "kubeconfig", c.Kubeconfig(), "took", time.Since(start).Round(time.Millisecond))
	return c, nil
}

func up(ctx context.Context, l layout, opts Options) (*Cluster, error) {
	log := opts.Log
	for _, dir := range []string{l.dir, l.path("run"), l.path("logs"), l.cniConfDir(), l.cniIPAMDir(), l.containerdDir(), l.kubeletRoot(), l.podLogs()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("localcluster: %w", err)
		}
	}
	if err := recordSysctls(l.path("sysctl-before.conf"), changedSysctls); err != nil {
		return nil, err
	}
	record, err := recordHost(ctx, l)
	if err != nil {
		return nil, err
	}

	apiPort, err := freePort(6443)
	if err != nil {
		return nil, err
	}
	server := "https://127.0.0.1:" + strconv.Itoa(apiPort)
	hostIP := defaultRouteIP()
	var hostIPs []net.IP
	if hostIP != nil {
		hostIPs = append(hostIPs, hostIP)
	}
	if err := writePKI(l, server, hostIPs); err != nil {
		return nil, err
	}
	files := map[string][]byte{
		l.containerdConfig(): renderContainerdConfig(l),
		filepath.Join(l.cniConfDir(), "10-"+cniNetwork+".conflist"): renderCNIConfig(l),
		l.kubeletConfig(): renderKubeletConfig(l, l.containerdSocket()),
		l.resolvConf():    renderResolvConf(),
	}
	for path, b := range files {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, fmt.Errorf("localcluster: %w", err)
		}
	}
	if err := addBridgeRules(ctx, l, &record); err != nil {
		return nil, err
	}

	// containerd, then the sandbox image in it before kubelet asks.
	t := time.Now()
	if _, err := startProcess(l, compContainerd, opts.Containerd, "--config", l.containerdConfig(), "--log-level", "warn"); err != nil {
		return nil, err
	}
	ctr := func(ctx context.Context, args ...string) ([]byte, error) { return runCtr(ctx, opts.Ctr, l, args...) }
	if err := waitFor(ctx, l, compContainerd, 30*time.Second, func(ctx context.Context) error {
		_, err := ctr(ctx, "version")
		return err
	}); err != nil {
		return nil, err
	}
	log.Info("localcluster: containerd up", "socket", l.containerdSocket(), "took", time.Since(t).Round(time.Millisecond))
	c := &Cluster{l: l, log: log, info: clusterInfo{Server: server, BinDir: opts.BinDir, Ctr: opts.Ctr}}
	if err := c.importSandboxImage(ctx, opts.BinDir); err != nil {
		return nil, err
	}

	t = time.Now()
	etcdClient, err := freePort(0)
	if err != nil {
		return nil, err
	}
	etcdPeer, err := freePort(0)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)
	if _, err := startProcess(l, compEtcd, opts.Etcd,
		"--name=default",
		"--data-dir="+l.etcdData(),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		"--log-level=warn",
	); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, l, compEtcd, time.Minute, func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, etcdURL+"/health")
	}); err != nil {
		return nil, err
	}
	log.Info("localcluster: etcd up", "url", etcdURL, "took", time.Since(t).Round(time.Millisecond))

	t = time.Now()
	if _, err := startProcess(l, compAPIServer, filepath.Join(opts.BinDir, compAPIServer), apiserverArgs(l, apiPort, etcdURL, hostIP)...); err != nil {
		return nil, err
	}
	admin, err := adminHTTPClient(l)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, l, compAPIServer, 2*time.Minute, func(ctx context.Context) error {
		return httpOK(ctx, admin, server+"/readyz")
	}); err != nil {
		return nil, err
	}
	log.Info("localcluster: kube-apiserver up", "server", server, "took", time.Since(t).Round(time.Millisecond))

	for _, comp := range []struct {
		name string
		args []string
	}{
		{compControllerManager, controllerManagerArgs(l)},
		{compScheduler, schedulerArgs(l)},
		{compKubelet, kubeletArgs(l, hostIP)},
	} {
		if _, err := startProcess(l, comp.name, filepath.Join(opts.BinDir, comp.name), comp.args...); err != nil {
			return nil, err
		}
	}
	t = time.Now()
	if err := waitFor(ctx, l, compKubelet, 3*time.Minute, c.nodeReady); err != nil {
		return nil, err
	}
	log.Info("localcluster: node Ready", "node", NodeName, "took", time.Since(t).Round(time.Millisecond))
	t = time.Now()
	ip, err := c.probe(ctx)
	if err != nil {
		return nil, err
	}
	log.Info("localcluster: probe pod ran", "podIP", ip, "took", time.Since(t).Round(time.Millisecond))

	c.info.Started = time.Now()
	b, err := json.MarshalIndent(c.info, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	if err := os.WriteFile(l.clusterFile(), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	return c, nil
}

// Running returns the cluster running in stateDir ("" means
// DefaultStateDir): one whose start finished, whose processes are all
// alive, and whose apiserver answers. ok is false when there is none; a
// half-started or broken one is not running (Down removes it). err is
// set when the state dir cannot be read, as when the caller is not root
// (the keys are readable by root only).
func Running(ctx context.Context, stateDir string) (c *Cluster, ok bool, err error) {
	if stateDir == "" {
		stateDir = DefaultStateDir
	}
	return running(ctx, layout{dir: filepath.Clean(stateDir)}, slog.Default())
}

func running(ctx context.Context, l layout, log *slog.Logger) (*Cluster, bool, error) {
	info, err := readClusterInfo(l)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil, false, fmt.Errorf("localcluster: %w", err)
	}
	if err != nil {
		return nil, false, nil // a cluster.json half written: broken
	}
	for _, name := range components {
		if _, ok := findProcess(l, name); !ok {
			return nil, false, nil
		}
	}
	admin, err := adminHTTPClient(l)
	if errors.Is(err, fs.ErrPermission) {
		return nil, false, err
	}
	if err != nil {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if httpOK(ctx, admin, info.Server+"/readyz") != nil {
		return nil, false, nil
	}
	return &Cluster{l: l, log: log, info: info}, true, nil
}

// lockStateDir takes an exclusive flock on the state dir's parent (which
// outlives the state dir), so one Up or Down runs at a time per host.
func lockStateDir(l layout) (unlock func(), err error) {
	parent := filepath.Dir(l.dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	f, err := os.Open(parent)
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("localcluster: locking %s: %w", parent, err)
	}
	return func() { f.Close() }, nil
}

// waitFor polls check every 250ms until it succeeds, the component's
// process ends (then the error holds its log's tail) or timeout passes.
func waitFor(parent context.Context, l layout, name string, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	var last error
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 10*time.Second)
		last = check(attempt)
		cancelAttempt()
		if last == nil {
			return nil
		}
		if _, ok := findProcess(l, name); !ok {
			return fmt.Errorf("localcluster: %s exited: %w\n%s", name, last, logTail(l, name))
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return parent.Err()
			}
			return fmt.Errorf("localcluster: %s not ready after %s: %w\n%s", name, timeout, last, logTail(l, name))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// logTail returns the last lines of a component's log, for an error.
func logTail(l layout, name string) string {
	b, err := os.ReadFile(l.logFile(name))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("--- last lines of %s:\n%s", l.logFile(name), tail(b, 3000))
}

// httpOK GETs url and wants a 200.
func httpOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// adminHTTPClient is an HTTPS client with the admin's certificate that
// trusts only the cluster's CA.
func adminHTTPClient(l layout) (*http.Client, error) {
	cert, err := tls.LoadX509KeyPair(l.pki("admin.crt"), l.pki("admin.key"))
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	caPEM, err := os.ReadFile(l.pki("ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12},
	}}, nil
}

// freePort returns want when it is free on 127.0.0.1 (0: any), else a
// port the kernel picks.
func freePort(want int) (int, error) {
	if want != 0 {
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(want)); err == nil {
			ln.Close()
			return want, nil
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("localcluster: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// defaultRouteIP returns this host's address on its default route (the
// node's InternalIP), or nil when there is none. No packet is sent: a UDP
// "connection" only picks the source address.
func defaultRouteIP() net.IP {
	conn, err := net.Dial("udp4", "198.18.0.1:9")
	if err != nil {
		return nil
	}
	defer conn.Close()
	ip := conn.LocalAddr().(*net.UDPAddr).IP
	if ip.IsLoopback() || ip.IsUnspecified() {
		return nil
	}
	return ip
}

// renderResolvConf returns the pods' resolv.conf: the host's
// nameservers, without its search domains (which would slow every lookup
// of a pod), or loopback when the host has none.
func renderResolvConf() []byte {
	var b strings.Builder
	host, _ := os.ReadFile("/etc/resolv.conf")
	for line := range strings.Lines(string(host)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "nameserver" {
			b.WriteString("nameserver " + f[1] + "\n")
		}
	}
	if b.Len() == 0 {
		b.WriteString("nameserver 127.0.0.1\n")
	}
	return []byte(b.String())
}

// runCtr runs containerd's CLI against the node's containerd, in the CRI
// plugin's namespace.
func runCtr(ctx context.Context, ctr string, l layout, args ...string) ([]byte, error) {
	return output(ctx, exec.CommandContext(ctx, ctr, append([]string{"--address", l.containerdSocket(), "--namespace", ImageNamespace}, args...)...))
}
