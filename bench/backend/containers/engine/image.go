package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	files := []ContextFile{
		{Name: "Dockerfile", Mode: 0o644, Content: []byte(dockerfile.String())},
		{Name: name, Mode: 0o755, Content: content},
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
	files := append([]ContextFile{{Name: "Dockerfile", Mode: 0o644, Content: []byte(p.HostDockerfile)}}, rootfs...)
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

// ensureImage returns monolock-bench/<name>:<ContentTag(files)>, building
// it from files (a build context holding a Dockerfile) unless it exists.
func ensureImage(ctx context.Context, name, source string, files []ContextFile) (Image, error) {
	tag, err := ContentTag(files)
	if err != nil {
		return Image{}, err
	}
	return EnsureImage(ctx, name, tag, source, func(context.Context) ([]ContextFile, error) { return files, nil })
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
