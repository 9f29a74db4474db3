package postgres

// The postgres image: the local install's server copied into a rootfs.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/docker"
)

// Image builds (or reuses) monolock-bench/postgres:<tag>: the host's
// PostgreSQL server (FindServer; Debian layout: the postgres binary, the
// libraries ldd lists for it and for plpgsql.so and dict_snowball.so, all
// of /usr/share/postgresql/<major>, the UTC zone file) at the host's
// paths in a scratch image, with a data directory made by InitDB
// (docker/postgres.Dockerfile), owned by and running as 65534. The
// container runs postgres -D /var/lib/postgresql/data -c
// listen_addresses=* -c port=5432; arguments given to the container
// replace that command, so start with ContainerCmd. The tag hashes the
// server files, the Dockerfile and the configuration, so initdb runs only
// when no image for them exists.
func Image(ctx context.Context) (bench.Image, error) {
	inst, err := FindServer(ctx)
	if err != nil {
		return bench.Image{}, err
	}
	rootfs, err := serverRootfs(ctx, inst)
	if err != nil {
		return bench.Image{}, err
	}
	var dockerfile strings.Builder
	tmpl := template.Must(template.New("Dockerfile").Parse(docker.Postgres))
	if err := tmpl.Execute(&dockerfile, struct{ Postgres string }{filepath.Join(inst.BinDir, "postgres")}); err != nil {
		return bench.Image{}, fmt.Errorf("postgres: Dockerfile: %w", err)
	}
	base := append([]engine.ContextFile{
		{Name: "Dockerfile", Mode: 0o644, Content: []byte(dockerfile.String())},
		{Name: "conf", Mode: 0o644, Content: []byte(confAppend + hbaConf)},
	}, rootfs...)
	tag, err := engine.ContentTag(base)
	if err != nil {
		return bench.Image{}, err
	}
	img, err := engine.EnsureImage(ctx, ImageName, tag, "host-postgres "+inst.Version, func(ctx context.Context) ([]engine.ContextFile, error) {
		pgdata, err := initializedData(ctx, inst)
		if err != nil {
			return nil, err
		}
		return append(base[:1:1], append(rootfs, pgdata...)...), nil
	})
	return bench.Image(img), err
}

// initializedData runs initdb into a temporary directory and returns the
// data directory's files under pgdata/data, for an image's build context:
// only built when the image is, since initdb takes seconds.
func initializedData(ctx context.Context, inst Install) ([]engine.ContextFile, error) {
	dir, err := os.MkdirTemp("", "monolock-bench-postgres-image-")
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer os.RemoveAll(dir)
	data, err := InitDB(ctx, inst, dir)
	if err != nil {
		return nil, err
	}
	return dirFiles(data, "pgdata/data")
}

// ContainerCmd is the image's command with settings added (e.g.
// TunedKeepalives): give it as the container's Cmd.
func ContainerCmd(settings ...string) []string {
	cmd := []string{"-D", dataInImage, "-c", "listen_addresses=*", "-c", "port=" + strconv.Itoa(Port)}
	return append(cmd, ServerArgs(settings...)...)
}

// serverRootfs collects the server's files under rootfs/ at their host
// paths, plus /etc/passwd and /etc/group naming 65534 postgres.
func serverRootfs(ctx context.Context, inst Install) ([]engine.ContextFile, error) {
	root := filepath.Dir(inst.BinDir) // /usr/lib/postgresql/15
	share := filepath.Join("/usr/share/postgresql", inst.Major)
	if _, err := os.Stat(share); err != nil {
		return nil, fmt.Errorf("postgres: the image needs the Debian layout (%s): %w", share, err)
	}
	bins := []string{filepath.Join(inst.BinDir, "postgres")}
	for _, lib := range []string{"plpgsql.so", "dict_snowball.so"} {
		bins = append(bins, filepath.Join(root, "lib", lib))
	}
	libs, err := engine.HostLibraries(ctx, bins...)
	if err != nil {
		return nil, err
	}
	var files []engine.ContextFile
	for _, p := range append(bins, libs...) {
		f, err := engine.HostFile(p, "rootfs"+p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	shareFiles, err := dirFiles(share, "rootfs"+share)
	if err != nil {
		return nil, err
	}
	files = append(files, shareFiles...)
	for _, z := range []string{"/usr/share/zoneinfo/UTC", "/usr/share/zoneinfo/Etc/UTC"} {
		f, err := engine.HostFile(z, "rootfs"+z)
		if err != nil {
			return nil, fmt.Errorf("postgres: zone file (tzdata): %w", err)
		}
		files = append(files, f)
	}
	files = append(files,
		engine.ContextFile{Name: "rootfs/etc/passwd", Mode: 0o644, Content: []byte("postgres:x:65534:65534:PostgreSQL:/var/lib/postgresql:/nonexistent\n")},
		engine.ContextFile{Name: "rootfs/etc/group", Mode: 0o644, Content: []byte("postgres:x:65534:\n")},
	)
	return files, nil
}

// dirFiles reads the tree at dir as context entries under prefix: every
// directory (with its mode, so empty ones exist and the data directory
// stays 0700) and regular file (symlinks followed).
func dirFiles(dir, prefix string) ([]engine.ContextFile, error) {
	var files []engine.ContextFile
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		name := prefix
		if rel != "." {
			name = prefix + "/" + filepath.ToSlash(rel)
		}
		if d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, engine.ContextFile{Name: name, Mode: int64(info.Mode().Perm()), Dir: true})
			return nil
		}
		f, err := engine.HostFile(path, name)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: reading %s: %w", dir, err)
	}
	return files, nil
}
