package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The Kubernetes release the cluster runs, built from the module proxy.
const (
	// Version is the k8s.io/kubernetes release of the binaries.
	Version = "v1.37.2"
	// stagingVersion is the matching release of the staging modules
	// (k8s.io/api, k8s.io/client-go, ...).
	stagingVersion = "v0.37.2"
	// pauseVersion is compiled into the pause binary, so that it says it
	// was built here rather than pulled.
	pauseVersion = "v3.10-monolock-bench"
)

// commands are the Kubernetes programs Build compiles. kube-proxy is not
// among them: the bench reaches pods at their pod IPs and uses no Service.
var commands = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kubectl"}

// pauseBinary is the name of the sandbox program in the bin dir.
const pauseBinary = "pause"

// buildMu serialises Build within the process; a lock file in the cache
// dir serialises processes (go test runs packages in parallel).
var buildMu sync.Mutex

// CacheDir returns where Build keeps its work:
// <user cache dir>/monolock-bench/kubernetes/<Version>.
func CacheDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("localcluster: %w", err)
	}
	return filepath.Join(cache, "monolock-bench", "kubernetes", Version), nil
}

// Built returns the bin dir and whether every Kubernetes binary is in it
// already, without building anything: tests use it to skip rather than
// pay a cold build.
func Built() (string, bool) {
	dir, err := CacheDir()
	if err != nil {
		return "", false
	}
	bin := filepath.Join(dir, "bin")
	return bin, len(missing(bin, commands)) == 0
}

// Build compiles what is missing of the Kubernetes binaries (commands,
// static, CGO_ENABLED=0) and the pause program (static, with gcc) into
// <CacheDir>/bin and returns that directory. A cold build takes 15 to 25
// minutes on two cores; a warm call only checks the files. It needs the Go
// module proxy (or a filled module cache), the go command and gcc on PATH.
// Safe for concurrent use, across processes too.
func Build(ctx context.Context, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.Default()
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bin")
	buildMu.Lock()
	defer buildMu.Unlock()
	if len(missing(bin, append(commands, pauseBinary))) == 0 {
		return bin, nil
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", fmt.Errorf("localcluster: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("localcluster: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("localcluster: locking the build: %w", err)
	}
	if todo := missing(bin, commands); len(todo) > 0 {
		start := time.Now()
		log.Info("localcluster: building Kubernetes binaries (a cold build takes 15-25 min)", "version", Version, "commands", todo, "dir", bin)
		if err := buildCommands(ctx, dir, todo); err != nil {
			return "", err
		}
		log.Info("localcluster: built Kubernetes binaries", "commands", todo, "took", time.Since(start).Round(time.Second))
	}
	if len(missing(bin, []string{pauseBinary})) > 0 {
		start := time.Now()
		if err := buildPause(ctx, dir); err != nil {
			return "", err
		}
		log.Info("localcluster: built the pause program", "took", time.Since(start).Round(time.Millisecond))
	}
	return bin, nil
}

// missing returns the names of bin that are not regular files.
func missing(bin string, names []string) []string {
	var out []string
	for _, n := range names {
		if st, err := os.Stat(filepath.Join(bin, n)); err != nil || !st.Mode().IsRegular() {
			out = append(out, n)
		}
	}
	return out
}

// buildCommands writes the wrapper module in dir/src (unless there) and
// builds the named commands into dir/bin, through a temporary directory
// so an interrupted build leaves no half-written binary.
func buildCommands(ctx context.Context, dir string, names []string) error {
	src := filepath.Join(dir, "src")
	if _, err := os.Stat(filepath.Join(src, "go.sum")); err != nil {
		if err := writeWrapperModule(ctx, src); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp(dir, "bin-build-")
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-trimpath", "-ldflags", ldflags(), "-o", tmp + "/"}
	for _, n := range names {
		args = append(args, "k8s.io/kubernetes/cmd/"+n)
	}
	if _, err := goCommand(ctx, src, args...); err != nil {
		return err
	}
	for _, n := range names {
		if err := os.Rename(filepath.Join(tmp, n), filepath.Join(dir, "bin", n)); err != nil {
			return fmt.Errorf("localcluster: %w", err)
		}
	}
	return nil
}

// ldflags strips the binaries and stamps the version they report, which
// a build from the module cache would otherwise leave at v0.0.0.
func ldflags() string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(Version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	pkg := "k8s.io/component-base/version."
	return strings.Join([]string{
		"-s", "-w",
		"-X", pkg + "gitVersion=" + Version,
		"-X", pkg + "gitMajor=" + major,
		"-X", pkg + "gitMinor=" + minor,
		"-X", pkg + "gitTreeState=clean",
	}, " ")
}

// writeWrapperModule writes the module that requires k8s.io/kubernetes:
// that module's own go.mod replaces its staging modules with local
// directories, which do not exist in the module cache, so the wrapper
// replaces each with its published release.
func writeWrapperModule(ctx context.Context, src string) error {
	gomod, _, err := kubernetesModule(ctx)
	if err != nil {
		return err
	}
	staging, err := stagingModules(gomod)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "module monolock-bench/kubernetes-build\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\n", Version)
	for _, m := range staging {
		fmt.Fprintf(&b, "replace %s => %s %s\n", m, m, stagingVersion)
	}
	var tools strings.Builder
	tools.WriteString("//go:build tools\n\npackage tools\n\nimport (\n")
	for _, n := range commands {
		fmt.Fprintf(&tools, "\t_ \"k8s.io/kubernetes/cmd/%s\"\n", n)
	}
	tools.WriteString(")\n")
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	if err := os.WriteFile(filepath.Join(src, "tools.go"), []byte(tools.String()), 0o644); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	_, err = goCommand(ctx, src, "mod", "tidy")
	return err
}

// kubernetesModule downloads k8s.io/kubernetes@Version and returns its
// go.mod file and its directory in the module cache.
func kubernetesModule(ctx context.Context) (gomod, dir string, err error) {
	dir, err = CacheDir()
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("localcluster: %w", err)
	}
	// Outside any module, so that the project's go.mod plays no part.
	out, err := goCommand(ctx, dir, "mod", "download", "-json", "k8s.io/kubernetes@"+Version)
	if err != nil {
		return "", "", err
	}
	var m struct{ GoMod, Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", "", fmt.Errorf("localcluster: go mod download: %w", err)
	}
	if m.Error != "" || m.GoMod == "" || m.Dir == "" {
		return "", "", fmt.Errorf("localcluster: go mod download k8s.io/kubernetes@%s: %s", Version, m.Error)
	}
	return m.GoMod, m.Dir, nil
}

// stagingModules returns the modules a Kubernetes go.mod replaces with a
// ./staging directory, in file order.
func stagingModules(gomod string) ([]string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	out := parseStagingReplaces(b)
	if len(out) == 0 {
		return nil, fmt.Errorf("localcluster: %s replaces no module with ./staging", gomod)
	}
	return out, nil
}

// parseStagingReplaces reads replace directives, in a block or alone, of
// the form `k8s.io/api => ./staging/src/k8s.io/api`.
func parseStagingReplaces(gomod []byte) []string {
	var out []string
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "replace (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "replace "):
			line = strings.TrimSpace(strings.TrimPrefix(line, "replace "))
		case !inBlock:
			continue
		}
		from, to, ok := strings.Cut(line, "=>")
		if !ok {
			continue
		}
		fields := strings.Fields(from)
		if len(fields) > 0 && strings.HasPrefix(strings.TrimSpace(to), "./staging/") {
			out = append(out, fields[0])
		}
	}
	return out
}

// buildPause compiles Kubernetes' pause.c, the process that holds a pod's
// namespaces, as a static binary into dir/bin.
func buildPause(ctx context.Context, dir string) error {
	_, mod, err := kubernetesModule(ctx)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "pause-build-")
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.CommandContext(ctx, "gcc", "-static", "-Os", "-DVERSION="+pauseVersion, "-o", tmp.Name(),
		filepath.Join(mod, "build", "pause", "linux", "pause.c"))
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("localcluster: gcc pause.c: %w\n%s", err, out)
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, "bin", pauseBinary)); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	return nil
}

// goCommand runs the go command in dir with CGO_ENABLED=0 and GOWORK=off
// and returns its stdout.
func goCommand(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	return output(ctx, cmd)
}

// output runs cmd and returns its standard output; a failure carries the
// command line and the tail of its standard error.
func output(ctx context.Context, cmd *exec.Cmd) ([]byte, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("localcluster: %s %s: %w: %s", filepath.Base(cmd.Path), strings.Join(cmd.Args[1:], " "), err, strings.TrimSpace(string(tail(stderr.Bytes(), 4000))))
	}
	return out, nil
}

// tail returns at most the last n bytes of b.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
