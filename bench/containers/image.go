package containers

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/monolock/monolock-bench/docker"
)

// Image is a Docker image the bench can run.
type Image struct {
	// Ref is the reference containers are created from, e.g.
	// "monolock-bench/monolock:0123456789abcdef0123".
	Ref string
	// Source says where the image came from, for the report:
	// "build <package>", "env <ref>", "registry <ref>" or
	// "host-<executable> <version>".
	Source string
	// Built is true when this call built the image, false when an image
	// with the same content hash was already there and is reused.
	Built bool
}

// registryPullTimeout bounds the attempt to pull a registry image: with
// no registry in reach the pull fails at once, and a slow one is not
// waited for since the host's executable will do.
const registryPullTimeout = 5 * time.Second

// imageRepoPrefix starts the repository of every image built here.
const imageRepoPrefix = "monolock-bench/"

var imageName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// BuildGoImage compiles the main package mainPkg of this module (an
// import path, or a path relative to the module root, which is found from
// the working directory) as a static binary (CGO_ENABLED=0, -trimpath) and
// puts it alone in a scratch image named monolock-bench/<name>, tagged by
// the hash of the binary and the Dockerfile. An image with that tag is
// reused. The binary runs as the image's entrypoint, as user 65534.
// Safe for concurrent use.
func BuildGoImage(ctx context.Context, mainPkg, name string) (Image, error) {
	if !imageName.MatchString(name) {
		return Image{}, fmt.Errorf("bench: image name %q: want lower-case letters, digits and dashes", name)
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return Image{}, err
	}
	dir, err := os.MkdirTemp("", "monolock-bench-image-")
	if err != nil {
		return Image{}, fmt.Errorf("bench: build %s: %w", mainPkg, err)
	}
	defer os.RemoveAll(dir)

	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, mainPkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return Image{}, ctx.Err()
		}
		return Image{}, fmt.Errorf("bench: go build %s: %w\n%s", mainPkg, err, out)
	}
	content, err := os.ReadFile(bin)
	if err != nil {
		return Image{}, fmt.Errorf("bench: build %s: %w", mainPkg, err)
	}

	var dockerfile strings.Builder
	tmpl := template.Must(template.New("Dockerfile").Parse(docker.StaticGo))
	if err := tmpl.Execute(&dockerfile, struct{ Binary string }{name}); err != nil {
		return Image{}, fmt.Errorf("bench: Dockerfile for %s: %w", name, err)
	}
	files := []contextFile{
		{name: "Dockerfile", mode: 0o644, content: []byte(dockerfile.String())},
		{name: name, mode: 0o755, content: content},
	}
	return ensureImage(ctx, name, "build "+mainPkg, files)
}

// ProgramImage says where the image of a program that is not built here
// comes from.
type ProgramImage struct {
	// Executable is the program's name on PATH, e.g. "redis-server".
	Executable string
	// Env names an environment variable that, when set, names the image.
	Env string
	// Registry is a registry image to try, e.g. "redis:7".
	Registry string
	// HostDockerfile packages the host's Executable: a Dockerfile copying
	// rootfs/ into an empty image.
	HostDockerfile string
}

// FindImage finds or builds the image of p, in this order: the image
// named by p.Env (pulled if absent; Source "env <ref>"); p.Registry if
// present or pullable within a few seconds (Source "registry <ref>"); else
// the host's executable and its shared libraries packaged with
// p.HostDockerfile (Source "host-<executable> <version>"). Safe for
// concurrent use.
func FindImage(ctx context.Context, p ProgramImage) (Image, error) {
	prov, err := newProvider()
	if err != nil {
		return Image{}, err
	}
	defer prov.Close()

	if ref := os.Getenv(p.Env); p.Env != "" && ref != "" {
		if err := ensurePulled(ctx, prov, ref); err != nil {
			return Image{}, fmt.Errorf("bench: %s=%s: %w", p.Env, ref, err)
		}
		return Image{Ref: ref, Source: "env " + ref}, nil
	}

	if p.Registry != "" {
		pullCtx, cancel := context.WithTimeout(ctx, registryPullTimeout)
		err = ensurePulled(pullCtx, prov, p.Registry)
		cancel()
		if err == nil {
			return Image{Ref: p.Registry, Source: "registry " + p.Registry}, nil
		}
		if ctx.Err() != nil {
			return Image{}, ctx.Err()
		}
		slog.Debug("bench: no registry image, packaging the host's executable", "image", p.Registry, "executable", p.Executable, "err", err)
	}

	rootfs, version, err := hostRootfs(ctx, p)
	if err != nil {
		return Image{}, err
	}
	files := append([]contextFile{{name: "Dockerfile", mode: 0o644, content: []byte(p.HostDockerfile)}}, rootfs...)
	return ensureImage(ctx, p.Executable, "host-"+p.Executable+" "+version, files)
}

// ensurePulled makes ref present locally, pulling it if needed.
func ensurePulled(ctx context.Context, p *testcontainers.DockerProvider, ref string) error {
	if _, err := p.Client().ImageInspect(ctx, ref); err == nil {
		return nil
	} else if !errdefs.IsNotFound(err) {
		return err
	}
	resp, err := p.Client().ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer resp.Close()
	return resp.Wait(ctx)
}

// contextFile is one file of a build context.
type contextFile struct {
	name    string // slash-separated path in the context
	mode    int64
	content []byte
}

// ensureImage returns monolock-bench/<name>:<hash of files>, building it
// from files (a build context holding a Dockerfile) unless it exists.
func ensureImage(ctx context.Context, name, source string, files []contextFile) (Image, error) {
	archive, err := tarContext(files)
	if err != nil {
		return Image{}, err
	}
	sum := sha256.Sum256(archive)
	repo, tag := imageRepoPrefix+name, hex.EncodeToString(sum[:10])
	img := Image{Ref: repo + ":" + tag, Source: source}

	p, err := newProvider()
	if err != nil {
		return Image{}, err
	}
	defer p.Close()
	if _, err := p.Client().ImageInspect(ctx, img.Ref); err == nil {
		return img, nil
	} else if !errdefs.IsNotFound(err) {
		return Image{}, fmt.Errorf("bench: inspect %s: %w", img.Ref, err)
	}

	start := time.Now()
	var buildLog bytes.Buffer
	_, err = p.BuildImage(ctx, &testcontainers.ContainerRequest{
		FromDockerfile: testcontainers.FromDockerfile{
			ContextArchive: bytes.NewReader(archive),
			Repo:           repo,
			Tag:            tag,
			KeepImage:      true, // cached by content hash; removed by RemoveAll
			BuildLogWriter: &buildLog,
			BuildOptionsModifier: func(o *client.ImageBuildOptions) {
				o.Labels = map[string]string{LabelProject: "1", LabelSource: source}
			},
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return Image{}, ctx.Err()
		}
		return Image{}, fmt.Errorf("bench: build image %s: %w\n%s", img.Ref, err, buildLog.Bytes())
	}
	slog.Info("bench: built image", "image", img.Ref, "source", source, "took", time.Since(start).Round(time.Millisecond))
	img.Built = true
	return img, nil
}

// tarContext writes files, and the directories above them, as a
// deterministic tar archive: sorted, fixed times and owners, so equal
// content gives an equal hash.
func tarContext(files []contextFile) ([]byte, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b contextFile) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, f := range files {
		var parents []string
		for d := filepath.ToSlash(filepath.Dir(f.name)); d != "." && d != "/" && !dirs[d]; d = filepath.ToSlash(filepath.Dir(d)) {
			dirs[d] = true
			parents = append(parents, d)
		}
		slices.Reverse(parents)
		for _, d := range parents {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
				return nil, fmt.Errorf("bench: build context: %w", err)
			}
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.content)), ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("bench: build context: %w", err)
		}
		if _, err := tw.Write(f.content); err != nil {
			return nil, fmt.Errorf("bench: build context: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("bench: build context: %w", err)
	}
	return buf.Bytes(), nil
}

// moduleRoot is the directory of the go.mod governing the working
// directory; BuildGoImage builds main packages relative to it.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("bench: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("bench: building images needs the monolock-bench module: run from inside its checkout")
	}
	return filepath.Dir(gomod), nil
}
