package etcd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/docker"
)

// The server this package builds and runs.
const (
	// ServerModule is the directory, relative to the project root, of the
	// Go module of the etcd server (a module of its own: the project's
	// go.mod does not take on the server's dependencies).
	ServerModule = "docker/etcd"
	// ServerVersion is the etcd release that module requires.
	ServerVersion = "3.7.3"
	// ClientPort and PeerPort are the ports members listen on inside
	// their containers.
	ClientPort = 2379
	PeerPort   = 2380
	// ClusterToken is every member's --initial-cluster-token.
	ClusterToken = "monolock-bench"
	// ImageName names the image: monolock-bench/etcd:<tag>.
	ImageName = "etcd"
)

// ServerFlags are the flags every member gets besides its addresses and
// data directory, recorded by ServerSettings. Heartbeat (100ms), election
// timeout (1s), snapshot count and fsync stay etcd's defaults; logs are
// cut to errors so a long run does not fill the bench's output buffers;
// the history is compacted every 5 minutes, as an operator would set it,
// so a long run does not reach the 2 GiB backend quota.
var ServerFlags = []string{
	"--log-level=error",
	"--auto-compaction-mode=periodic",
	"--auto-compaction-retention=5m",
}

// healthTimeout bounds WaitHealthy when its ctx has no deadline.
const healthTimeout = 60 * time.Second

// buildMu serialises BuildServer within the process; a lock file beside
// the cached binary serialises processes, so one build serves all.
var buildMu sync.Mutex

// BuildServer compiles the etcd server of ServerModule as a static binary
// (CGO_ENABLED=0, GOOS=linux, -trimpath, -buildvcs=false) with the go
// command on PATH and returns its path, for the local backend. The binary
// is cached in <user cache dir>/monolock-bench/etcd-<key>/etcd, where key
// hashes the module's go.mod, go.sum and main.go, the Go version and the
// target, so a rebuild happens only when one of them changes (a first
// build takes about a minute and a half on two cores). It needs the
// project checkout (found from the working directory with `go env
// GOMOD`) and the Go module proxy or a filled module cache.
func BuildServer(ctx context.Context) (string, error) {
	dir, key, err := serverSource(ctx)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("etcd: %w", err)
	}
	out := filepath.Join(cache, "monolock-bench", "etcd-"+key, "etcd")
	buildMu.Lock()
	defer buildMu.Unlock()
	if st, err := os.Stat(out); err == nil && st.Mode().IsRegular() {
		return out, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("etcd: %w", err)
	}
	// go test runs packages in parallel processes: one builds while the
	// others wait on the lock file, then find the binary.
	lock, err := os.OpenFile(filepath.Join(filepath.Dir(out), "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("etcd: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("etcd: locking the build: %w", err)
	}
	if st, err := os.Stat(out); err == nil && st.Mode().IsRegular() {
		return out, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "etcd-build-")
	if err != nil {
		return "", fmt.Errorf("etcd: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", tmp.Name(), ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("etcd: go build in %s: %w\n%s", dir, err, b)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", fmt.Errorf("etcd: %w", err)
	}
	return out, nil
}

// serverSource returns the server module's directory and a key hashing
// its sources, the Go version and the target.
func serverSource(ctx context.Context) (dir, key string, err error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD", "GOVERSION", "GOARCH").Output()
	if err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		return "", "", fmt.Errorf("etcd: go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(gomod)), "\n")
	if len(lines) != 3 || lines[0] == "" || lines[0] == os.DevNull {
		return "", "", errors.New("etcd: building the etcd server needs the monolock-bench checkout: run from inside it")
	}
	dir = filepath.Join(filepath.Dir(lines[0]), filepath.FromSlash(ServerModule))
	h := sha256.New()
	fmt.Fprintf(h, "%s linux/%s CGO_ENABLED=0 -trimpath -buildvcs=false\n", lines[1], lines[2])
	for _, name := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", "", fmt.Errorf("etcd: etcd server source: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	return dir, hex.EncodeToString(h.Sum(nil))[:20], nil
}

// Image builds (or reuses) monolock-bench/etcd:<tag>: the BuildServer
// binary alone in a scratch image (docker/etcd.Dockerfile) running as
// 65534 with /data as its writable data directory. The tag hashes the
// Dockerfile and the BuildServer key, so the binary is built only when no
// image for the current source exists.
func Image(ctx context.Context) (bench.Image, error) {
	_, key, err := serverSource(ctx)
	if err != nil {
		return bench.Image{}, err
	}
	tag, err := engine.ContentTag([]engine.ContextFile{
		{Name: "Dockerfile", Mode: 0o644, Content: []byte(docker.Etcd)},
		{Name: "key", Mode: 0o644, Content: []byte(key)},
	})
	if err != nil {
		return bench.Image{}, err
	}
	source := "build " + ServerModule + " (etcd " + ServerVersion + ")"
	img, err := engine.EnsureImage(ctx, ImageName, tag, source, func(ctx context.Context) ([]engine.ContextFile, error) {
		bin, err := BuildServer(ctx)
		if err != nil {
			return nil, err
		}
		content, err := os.ReadFile(bin)
		if err != nil {
			return nil, fmt.Errorf("etcd: %w", err)
		}
		return []engine.ContextFile{
			{Name: "Dockerfile", Mode: 0o644, Content: []byte(docker.Etcd)},
			{Name: "etcd", Mode: 0o755, Content: content},
			{Name: "data", Mode: 0o700, Dir: true},
		}, nil
	})
	return bench.Image(img), err
}

// Member is one member of a cluster, as its peers and clients see it.
type Member struct {
	// Name is the member's --name ("etcd-0").
	Name string
	// ClientURL and PeerURL are advertised: "http://host:port".
	ClientURL, PeerURL string
	// ListenClientURL and ListenPeerURL are where the member listens;
	// empty means the advertised URL ("http://0.0.0.0:2379" in a
	// container whose advertised host is its network alias).
	ListenClientURL, ListenPeerURL string
}

// InitialCluster is the --initial-cluster value for cluster:
// "name=peerURL,...".
func InitialCluster(cluster []Member) string {
	parts := make([]string, len(cluster))
	for i, m := range cluster {
		parts[i] = m.Name + "=" + m.PeerURL
	}
	return strings.Join(parts, ",")
}

// MemberArgs is the command line (without the program name) of member m
// of a new cluster, with its data in dataDir and ServerFlags. The client
// URL also serves /health and /metrics.
func MemberArgs(m Member, cluster []Member, dataDir string) []string {
	listenClient, listenPeer := m.ListenClientURL, m.ListenPeerURL
	if listenClient == "" {
		listenClient = m.ClientURL
	}
	if listenPeer == "" {
		listenPeer = m.PeerURL
	}
	args := []string{
		"--name", m.Name,
		"--data-dir", dataDir,
		"--listen-client-urls", listenClient,
		"--advertise-client-urls", m.ClientURL,
		"--listen-peer-urls", listenPeer,
		"--initial-advertise-peer-urls", m.PeerURL,
		"--initial-cluster", InitialCluster(cluster),
		"--initial-cluster-state", "new",
		"--initial-cluster-token", ClusterToken,
	}
	return append(args, ServerFlags...)
}

// WaitHealthy polls GET /health on every endpoint (host:port of a
// member's client URL) until each answers {"health":"true"} (a leader is
// elected and no alarm is raised), ctx ends, or 60s pass when ctx has no
// deadline.
func WaitHealthy(ctx context.Context, endpoints []string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, healthTimeout)
		defer cancel()
	}
	for _, ep := range endpoints {
		for {
			err := Healthy(ctx, ep)
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("etcd: member %s not healthy: %w", ep, err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// Healthy asks one member (host:port of its client URL) for /health and
// returns nil when it answers {"health":"true"}.
func Healthy(ctx context.Context, endpoint string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+endpoint+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return err
	}
	var h struct {
		Health string `json:"health"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("etcd: /health answered %s %q", resp.Status, body)
	}
	if resp.StatusCode != http.StatusOK || h.Health != "true" {
		return fmt.Errorf("etcd: /health: %s health=%s %s", resp.Status, h.Health, h.Reason)
	}
	return nil
}
