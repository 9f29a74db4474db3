package zookeeper

// The zookeeper image: the host's jars and Java runtime copied into an
// empty image.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/docker"
)

// MemberPackage is the entrypoint of the image: it writes a member's
// files from its arguments and execs the runtime.
const MemberPackage = "github.com/monolock/monolock-bench/cmd/zkmember"

// Image builds (or reuses) monolock-bench/zookeeper:<tag>: the host's
// install (FindInstall) at the host's paths in a scratch image
// (docker/zookeeper.Dockerfile) with cmd/zkmember as the entrypoint,
// running as 65534 with /data and /tmp writable. Give containerArgs as
// the container's command. The tag hashes every file of the context, so
// the image is rebuilt only when the install or the entrypoint changes.
func Image(ctx context.Context) (bench.Image, error) {
	in, err := FindInstall(ctx)
	if err != nil {
		return bench.Image{}, err
	}
	files, err := imageFiles(ctx, in)
	if err != nil {
		return bench.Image{}, err
	}
	tag, err := engine.ContentTag(files)
	if err != nil {
		return bench.Image{}, err
	}
	source := "host-zookeeper " + in.Package + " on " + filepath.Base(in.JavaHome)
	img, err := engine.EnsureImage(ctx, ImageName, tag, source, func(context.Context) ([]engine.ContextFile, error) {
		return files, nil
	})
	return bench.Image(img), err
}

// imageFiles is the image's build context.
func imageFiles(ctx context.Context, in Install) ([]engine.ContextFile, error) {
	member, err := buildMember(ctx)
	if err != nil {
		return nil, err
	}
	files := []engine.ContextFile{
		{Name: "Dockerfile", Mode: 0o644, Content: []byte(docker.ZooKeeper)},
		{Name: "rootfs/zkmember", Mode: 0o755, Content: member},
		{Name: "data", Mode: 0o700, Dir: true},
		{Name: "tmp", Mode: 0o700, Dir: true},
		{Name: "rootfs/etc/passwd", Mode: 0o644, Content: []byte("zookeeper:x:65534:65534:ZooKeeper:/data:/nonexistent\n")},
		{Name: "rootfs/etc/group", Mode: 0o644, Content: []byte("zookeeper:x:65534:\n")},
	}
	runtime, err := runtimeFiles(ctx, in.JavaHome)
	if err != nil {
		return nil, err
	}
	files = append(files, runtime...)
	for _, j := range in.Jars {
		f, err := engine.HostFile(j, "rootfs"+j)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// runtimeFiles are the Java runtime's files under rootfs/ at their host
// paths: bin/java, every file of lib/ and conf/ (symlinks followed; a
// dangling one, such as an optional accessibility library, skipped; the
// JDK's ct.sym and src.zip left out) and release, plus the shared
// libraries ldd lists for the launcher, libjli and libjvm (the runtime's
// other libraries load only those and libjvm).
func runtimeFiles(ctx context.Context, home string) ([]engine.ContextFile, error) {
	java := filepath.Join(home, "bin", "java")
	libs, err := engine.HostLibraries(ctx, java, filepath.Join(home, "lib", "libjli.so"), filepath.Join(home, "lib", "server", "libjvm.so"))
	if err != nil {
		return nil, err
	}
	var files []engine.ContextFile
	for _, p := range append([]string{java, filepath.Join(home, "release")}, libs...) {
		f, err := engine.HostFile(p, "rootfs"+p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	for _, dir := range []string{"lib", "conf"} {
		root := filepath.Join(home, dir)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch name := d.Name(); {
			case d.IsDir():
				return nil
			case name == "ct.sym" || name == "src.zip":
				return nil
			}
			f, err := engine.HostFile(p, "rootfs"+p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a dangling symlink
			}
			if err != nil {
				return err
			}
			// A symlinked directory (lib/security/cacerts is a file, but
			// some layouts link directories) reads as an error above.
			files = append(files, f)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("zookeeper: the Java runtime's %s: %w", root, err)
		}
	}
	return files, nil
}

// buildMember compiles cmd/zkmember as a static binary (the module
// checkout is found from the working directory, as BuildGoImage finds
// it) and returns its content. The go command's cache makes a rebuild
// cheap.
func buildMember(ctx context.Context) ([]byte, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("zookeeper: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return nil, errors.New("zookeeper: building the image needs the monolock-bench checkout: run from inside it")
	}
	dir, err := os.MkdirTemp("", "monolock-bench-zkmember-")
	if err != nil {
		return nil, fmt.Errorf("zookeeper: %w", err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "zkmember")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", bin, MemberPackage)
	cmd.Dir = filepath.Dir(gomod)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("zookeeper: go build %s: %w\n%s", MemberPackage, err, b)
	}
	content, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("zookeeper: %w", err)
	}
	return content, nil
}
