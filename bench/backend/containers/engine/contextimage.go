package engine

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// ContextFile is one entry of a build context assembled by a contender
// package (see EnsureImage).
type ContextFile struct {
	// Name is the slash-separated path in the context.
	Name string
	// Mode holds the permission bits (0o755, 0o700, ...).
	Mode int64
	// Dir marks a directory entry: its Mode is kept, which matters for a
	// directory a server checks (PostgreSQL's data directory must be
	// 0700). Directories not listed are written 0755.
	Dir bool
	// Content is a regular file's content.
	Content []byte
}

// ContentTag returns a tag for an image built from files alone: the
// first 20 hex digits of the SHA-256 of their deterministic archive, as
// BuildGoImage tags its images.
func ContentTag(files []ContextFile) (string, error) {
	archive, err := contextArchive(files)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(archive)
	return hex.EncodeToString(sum[:10]), nil
}

// EnsureImage returns the image monolock-bench/<name>:<tag>, building it
// with the build context that files returns (it must hold a Dockerfile)
// unless an image with that reference exists. files is called only when a
// build is needed, so a costly context (an initdb) is made once per tag.
// The tag must change whenever the content would: a content hash of the
// inputs (ContentTag, or a hash of what files reads). The image carries
// LabelProject=1 and LabelSource=source, like every image built here.
// Safe for concurrent use (two concurrent builds of one tag both succeed).
func EnsureImage(ctx context.Context, name, tag, source string, files func(context.Context) ([]ContextFile, error)) (Image, error) {
	if !imageName.MatchString(name) {
		return Image{}, fmt.Errorf("bench: image name %q: want lower-case letters, digits and dashes", name)
	}
	repo := imageRepoPrefix + name
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
	list, err := files(ctx)
	if err != nil {
		return Image{}, err
	}
	archive, err := contextArchive(list)
	if err != nil {
		return Image{}, err
	}
	var buildLog bytes.Buffer
	_, err = p.BuildImage(ctx, &testcontainers.ContainerRequest{
		FromDockerfile: testcontainers.FromDockerfile{
			ContextArchive: bytes.NewReader(archive),
			Repo:           repo,
			Tag:            tag,
			KeepImage:      true, // cached by tag; removed by RemoveAll
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

// contextArchive writes files as a deterministic tar archive: sorted,
// fixed times and owners (root), directories above each file written
// first (0755 unless listed with Dir).
func contextArchive(files []ContextFile) ([]byte, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b ContextFile) int {
		return strings.Compare(strings.TrimSuffix(a.Name, "/"), strings.TrimSuffix(b.Name, "/"))
	})
	listed := map[string]int64{}
	for _, f := range files {
		if f.Dir {
			listed[strings.TrimSuffix(f.Name, "/")] = f.Mode
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	written := map[string]bool{}
	writeDir := func(d string) error {
		if written[d] {
			return nil
		}
		written[d] = true
		mode, ok := listed[d]
		if !ok {
			mode = 0o755
		}
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: mode, ModTime: time.Unix(0, 0)})
	}
	for _, f := range files {
		name := strings.TrimSuffix(f.Name, "/")
		var parents []string
		for d := filepath.ToSlash(filepath.Dir(name)); d != "." && d != "/"; d = filepath.ToSlash(filepath.Dir(d)) {
			parents = append(parents, d)
		}
		slices.Reverse(parents)
		for _, d := range parents {
			if err := writeDir(d); err != nil {
				return nil, fmt.Errorf("bench: build context: %w", err)
			}
		}
		if f.Dir {
			if err := writeDir(name); err != nil {
				return nil, fmt.Errorf("bench: build context: %w", err)
			}
			continue
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: f.Mode, Size: int64(len(f.Content)), ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("bench: build context: %w", err)
		}
		if _, err := tw.Write(f.Content); err != nil {
			return nil, fmt.Errorf("bench: build context: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("bench: build context: %w", err)
	}
	return buf.Bytes(), nil
}

// HostLibraries returns the absolute paths of the shared libraries and
// the dynamic loader that ldd says the host binaries at paths load, each
// once, in a stable order (the paths the loader asks for, symlinks not
// resolved: copy their targets' content to these names). A library ldd
// cannot find is an error.
func HostLibraries(ctx context.Context, paths ...string) ([]string, error) {
	seen := map[string]bool{}
	var libs []string
	for _, p := range paths {
		out, err := exec.CommandContext(ctx, "ldd", p).Output()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("bench: ldd %s (needs a dynamically linked binary and ldd): %w", p, err)
		}
		list, err := parseLdd(string(out))
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", p, err)
		}
		for _, l := range list {
			if !seen[l] {
				seen[l] = true
				libs = append(libs, l)
			}
		}
	}
	slices.Sort(libs)
	return libs, nil
}

// HostFile reads the host file at path (symlinks followed) as the context
// entry name with its permission bits.
func HostFile(path, name string) (ContextFile, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ContextFile{}, fmt.Errorf("bench: %w", err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return ContextFile{}, fmt.Errorf("bench: %w", err)
	}
	content, err := os.ReadFile(real)
	if err != nil {
		return ContextFile{}, fmt.Errorf("bench: %w", err)
	}
	return ContextFile{Name: name, Mode: int64(st.Mode().Perm()), Content: content}, nil
}
