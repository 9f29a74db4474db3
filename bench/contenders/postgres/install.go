package postgres

// Finding a local PostgreSQL install, initdb, and the command line of a
// local server process.

import (
	"context"
	"errors"
	"fmt"
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
)

// ErrNoServer is returned when no PostgreSQL server is installed.
var ErrNoServer = errors.New("postgres: no PostgreSQL server found (postgres on PATH or /usr/lib/postgresql/<version>/bin): install it, e.g. apt-get install -y postgresql")

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
	return asServerUser(argv)
}

// asServerUser runs argv through setpriv as user postgres (or nobody)
// when the bench runs as root, keeping the parent-death signal; name is
// that user ("" for the bench's own, argv unchanged).
func asServerUser(argv []string) (_ []string, name string, err error) {
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
