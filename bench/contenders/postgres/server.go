package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/docker"
)

// The server this package runs.
const (
	// Port is the port the server listens on inside its container.
	Port = 5432
	// User and Database are the superuser initdb creates and the database
	// the Locker connects to; authentication is trust.
	User     = "postgres"
	Database = "postgres"
	// ImageName names the image: monolock-bench/postgres:<tag>.
	ImageName = "postgres"
	// Role is the server role of the contender in results.
	Role = "postgres"
	// dataInImage is the data directory inside the image.
	dataInImage = "/var/lib/postgresql/data"
)

// ErrNoServer is returned when no PostgreSQL server is installed.
var ErrNoServer = errors.New("postgres: no PostgreSQL server found (postgres on PATH or /usr/lib/postgresql/<version>/bin): install it, e.g. apt-get install -y postgresql")

// TunedKeepalives are server settings that make the server notice a dead
// client within seconds rather than the operating system's two hours, as
// the PostgreSQL comparison page suggests: keepalive probes after 1s of
// silence, every 1s, 3 unanswered probes end the session, and unacked
// data ends it after 3s (tcp_user_timeout). Give them to ServerArgs.
var TunedKeepalives = []string{
	"tcp_keepalives_idle=1",
	"tcp_keepalives_interval=1",
	"tcp_keepalives_count=3",
	"tcp_user_timeout=3000",
}

// ServerArgs turns "name=value" settings into postgres -c flags.
func ServerArgs(settings ...string) []string {
	args := make([]string, 0, 2*len(settings))
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	return args
}

// confAppend is added to the postgresql.conf initdb writes: no Unix
// socket (the image has no /var/run/postgresql and the bench uses TCP),
// UTC so the image needs one zone file.
const confAppend = `
# monolock-bench
unix_socket_directories = ''
timezone = 'UTC'
log_timezone = 'UTC'
`

// hbaConf replaces initdb's pg_hba.conf: trust from any address (the
// server listens on 127.0.0.1 locally and on the run's private network in
// a container).
const hbaConf = `# monolock-bench: trust, reached only on loopback or the run's private network
local all all trust
host  all all 0.0.0.0/0 trust
host  all all ::/0 trust
`

// Install is a PostgreSQL server installation on the host.
type Install struct {
	// BinDir holds postgres and initdb ("/usr/lib/postgresql/15/bin").
	BinDir string
	// Version is the server's version ("15.18 (Debian 15.18-0+deb12u1)").
	Version string
	// Major is the major version ("15").
	Major string
}

var pgVersion = regexp.MustCompile(`\(PostgreSQL\) ((\d+)\S*.*)$`)

// FindServer locates the PostgreSQL server: postgres on PATH (symlinks
// followed; initdb must be beside it), else the newest Debian layout
// /usr/lib/postgresql/<major>/bin. The error wraps ErrNoServer when there
// is none.
func FindServer(ctx context.Context) (Install, error) {
	var bin string
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if _, err := os.Stat(filepath.Join(filepath.Dir(real), "initdb")); err == nil {
				bin = filepath.Dir(real)
			}
		}
	}
	if bin == "" {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
		slices.SortFunc(dirs, func(a, b string) int {
			return majorOf(a) - majorOf(b)
		})
		if len(dirs) == 0 {
			return Install{}, ErrNoServer
		}
		bin = filepath.Dir(dirs[len(dirs)-1])
	}
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "postgres"), "--version").Output()
	if err != nil {
		return Install{}, fmt.Errorf("postgres: %s/postgres --version: %w", bin, err)
	}
	m := pgVersion.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return Install{}, fmt.Errorf("postgres: unexpected postgres --version output %q", out)
	}
	return Install{BinDir: bin, Version: m[1], Major: m[2]}, nil
}

// majorOf reads <major> from /usr/lib/postgresql/<major>/bin/postgres.
func majorOf(path string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return n
}

// serverUser is the account initdb and postgres run as when the bench
// runs as root (PostgreSQL refuses root): "postgres" if it exists, else
// "nobody". nil when the bench is not root: the server runs as the bench's
// user.
func serverUser() (*syscall.Credential, string, error) {
	if os.Geteuid() != 0 {
		return nil, "", nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, name, nil
	}
	return nil, "", errors.New("postgres: running as root and neither user postgres nor nobody exists to run PostgreSQL as")
}

// InitDB makes a data directory at dir/data with inst's initdb, as a
// non-root user when the bench runs as root (dir is then handed to that
// user): superuser User, trust authentication (pg_hba.conf replaced by
// one trusting every address), UTF8, locale C, no fsync of the new files
// (--no-sync), no Unix socket, UTC. dir must exist; it returns the data
// directory.
func InitDB(ctx context.Context, inst Install, dir string) (string, error) {
	cred, _, err := serverUser()
	if err != nil {
		return "", err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return "", fmt.Errorf("postgres: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	cmd := exec.CommandContext(ctx, filepath.Join(inst.BinDir, "initdb"),
		"-D", data, "-U", User, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Env = append(os.Environ(), "TZ=UTC")
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("postgres: initdb: %w\n%s", err, out)
	}
	conf, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	_, err = conf.WriteString(confAppend)
	if cerr := conf.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hbaConf), 0o600)
	}
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	return data, nil
}

// command is the command line of postgres on its data directory data,
// listening on addr (host:port) with args appended, run through setpriv
// as user postgres (or nobody) when the bench runs as root; name is that
// user ("" for the bench's own).
func command(inst Install, data, addr string, args ...string) (argv []string, name string, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("postgres: %w", err)
	}
	argv = append([]string{filepath.Join(inst.BinDir, "postgres"), "-D", data, "-c", "listen_addresses=" + host, "-c", "port=" + port}, args...)
	cred, name, err := serverUser()
	if err != nil || cred == nil {
		return argv, name, err
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return nil, "", fmt.Errorf("postgres: running as root needs setpriv (util-linux) to start postgres as %s: %w", name, err)
	}
	return append([]string{setpriv, "--reuid=" + strconv.Itoa(int(cred.Uid)), "--regid=" + strconv.Itoa(int(cred.Gid)), "--clear-groups", "--pdeathsig=keep", "--"}, argv...), name, nil
}

// LocalCommand makes a data directory in dir with InitDB and returns the
// command line that runs the host's server on it at addr (host:port)
// with settings ("name=value", e.g. TunedKeepalives), as a non-root user
// when the bench runs as root (through setpriv, which keeps the
// parent-death signal).
func LocalCommand(ctx context.Context, dir, addr string, settings ...string) ([]string, error) {
	inst, err := FindServer(ctx)
	if err != nil {
		return nil, err
	}
	data, err := InitDB(ctx, inst, dir)
	if err != nil {
		return nil, err
	}
	argv, _, err := command(inst, data, addr, ServerArgs(settings...)...)
	return argv, err
}

// readyTimeout bounds WaitReady when its ctx has no deadline.
const readyTimeout = 60 * time.Second

// WaitReady connects to the server at addr until it answers SELECT 1
// (past "the database system is starting up"), ctx ends, or 60s pass
// when ctx has no deadline.
func WaitReady(ctx context.Context, addr string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readyTimeout)
		defer cancel()
	}
	for {
		err := ping(ctx, addr)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres: server at %s not ready: %w", addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Ready is a engine.ReadyFunc: the container's server answers
// SELECT 1.
func Ready(ctx context.Context, c *engine.Container) error { return ping(ctx, c.Addr()) }

func ping(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, ConnString(addr))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var one int
	return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
}

// ConnString is the connection string for the server at addr (host:port):
// user User, database Database, no TLS, no password.
func ConnString(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, strconv.Itoa(Port)
	}
	return fmt.Sprintf("host=%s port=%s user=%s dbname=%s sslmode=disable", host, port, User, Database)
}

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
		dir, err := os.MkdirTemp("", "monolock-bench-postgres-image-")
		if err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		defer os.RemoveAll(dir)
		data, err := InitDB(ctx, inst, dir)
		if err != nil {
			return nil, err
		}
		pgdata, err := dirFiles(data, "pgdata/data")
		if err != nil {
			return nil, err
		}
		return append(base[:1:1], append(rootfs, pgdata...)...), nil
	})
	return bench.Image(img), err
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
