package postgres

// PgBouncer in transaction pooling mode in front of PostgreSQL, run
// together as one server: PostgreSQL listens only on a Unix socket in the
// server's directory, PgBouncer on the server's TCP address. A
// ServerSpec describes one kind of server and learns no other spec's
// address, so the pair is one server: one process group on the local
// backend, one container on the containers backend. Every client byte
// goes through PgBouncer, so a kill, pause or cut of the server is one
// of the pair as its clients see it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/docker"
)

// The PgBouncer server.
const (
	// PgBouncerPort is PgBouncer's port inside its container.
	PgBouncerPort = 6432
	// PgBouncerPoolSize is default_pool_size: the server connections
	// PgBouncer keeps to PostgreSQL for the database, shared by every
	// client. It is small, a few below the clients of the tests (6) and
	// far below a run's, so that server connections really are shared.
	PgBouncerPoolSize = 4
	// PgBouncerFenceDatabase is a second entry for the same database,
	// with a pool of its own (PgBouncerFencePoolSize), through which the
	// xact row draws its tokens: a holder's token must not wait for a
	// server connection that waiters on its own lock pin.
	PgBouncerFenceDatabase = "monolock_bench_fence"
	// PgBouncerFencePoolSize is the fence entry's pool_size: a token is
	// one short autocommit statement.
	PgBouncerFencePoolSize = 2
	// PgBouncerImageName names the image: monolock-bench/postgres-pgbouncer:<tag>.
	PgBouncerImageName = "postgres-pgbouncer"
	// socketInImage is PostgreSQL's socket directory in the image.
	socketInImage = "/var/lib/postgresql"
	// pgbouncerIniInImage is PgBouncer's configuration in the image.
	pgbouncerIniInImage = "/var/lib/postgresql/pgbouncer.ini"
)

// ErrNoPgBouncer is returned when PgBouncer is not installed.
var ErrNoPgBouncer = errors.New("postgres: no pgbouncer on PATH or in /usr/sbin: install it, e.g. apt-get install -y pgbouncer")

// PgBouncerServer is the postgres-pgbouncer rows' server: PgBouncer
// 1.18 from the host's Debian package, transaction pooling with
// PgBouncerPoolSize server connections, in front of the host's
// PostgreSQL with its default settings. Ready once a SELECT 1 passes
// through PgBouncer. Its graceful stop is SIGTERM: PgBouncer's immediate
// shutdown (SIGINT waits for every server connection to be released,
// which a client inside a transaction may never do); PostgreSQL then gets
// SIGINT (locally its parent-death signal; in a container the end of the
// container's init).
var PgBouncerServer = &bench.ServerSpec{
	Name: "postgres-pgbouncer",
	// The image's entrypoint runs the pair (PgBouncerImage).
	Args:    func(bench.ServerArgs) []string { return nil },
	Command: pgbouncerLocalCommand,
	Image:   PgBouncerImage,
	Port:    PgBouncerPort,
	Ready: func(ctx context.Context, addr, _ string) error {
		p, err := dialProbe(ctx, addr, true)
		if err != nil {
			return err
		}
		defer p.Close(context.WithoutCancel(ctx))
		var one int
		return p.conn.QueryRow(ctx, "SELECT 1").Scan(&one)
	},
	Version: func(ctx context.Context, addr string) (string, error) {
		v, err := serverVersion(ctx, addr, true)
		if err != nil {
			return "", err
		}
		return "PgBouncer (transaction pooling) → PostgreSQL " + v, nil
	},
}

// pgbouncerIni is PgBouncer's configuration: one database (and the
// tokens' entry for it, PgBouncerFenceDatabase), reached on
// PostgreSQL's Unix socket in socketDir as user postgres (auth_type any:
// the client's user name is ignored, nothing is checked, as PostgreSQL's
// trust), transaction pooling with PgBouncerPoolSize server connections,
// logging to stderr.
func pgbouncerIni(listenHost string, listenPort int, socketDir string) string {
	return fmt.Sprintf(`; monolock-bench: PgBouncer in front of PostgreSQL
[databases]
%[1]s = host=%[2]s port=%[3]d dbname=%[1]s user=%[4]s
%[5]s = host=%[2]s port=%[3]d dbname=%[1]s user=%[4]s pool_size=%[6]d

[pgbouncer]
listen_addr = %[7]s
listen_port = %[8]d
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = %[9]d
max_client_conn = 1000
; PostgreSQL starts beside PgBouncer: retry a refused login soon
server_login_retry = 0.2
ignore_startup_parameters = extra_float_digits
logfile =
pidfile =
log_connections = 0
log_disconnections = 0
`, Database, socketDir, Port, User, PgBouncerFenceDatabase, PgBouncerFencePoolSize, listenHost, listenPort, PgBouncerPoolSize)
}

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// oldPostmaster says what the pair script does with a postmaster.pid
// left in the data directory by the previous pair.
type oldPostmaster int

const (
	// waitForOldPostmaster waits (up to 10s) for it to go, as a local
	// restart's previous pair shuts down beside the new one.
	waitForOldPostmaster oldPostmaster = iota
	// removeOldPostmaster deletes it and the socket's lock file: in a
	// container every process died with the previous start, so both are
	// stale, and the PID they name may now be one of PgBouncer's threads,
	// which PostgreSQL takes for a running postmaster and refuses to
	// start (the soak 20261207T140711Z: after a kill, PgBouncer said
	// "server down" until the run gave up).
	removeOldPostmaster
)

// pairScript is the sh script that runs the pair: PostgreSQL in the
// background on its Unix socket only (through pgPrefix, e.g. setpriv
// --pdeathsig, so that it shuts down when PgBouncer exits), then exec
// PgBouncer, which keeps the shell's process id: the server's signals
// reach PgBouncer. old says what happens first to a previous
// postmaster's postmaster.pid.
func pairScript(pgPrefix, pgBin, data, socketDir, pgbouncerBin, ini string, old oldPostmaster) string {
	var b strings.Builder
	pidFile := shQuote(filepath.Join(data, "postmaster.pid"))
	switch old {
	case waitForOldPostmaster:
		fmt.Fprintf(&b, "i=0; while [ -e %s ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; ", pidFile)
	case removeOldPostmaster:
		socketLock := shQuote(filepath.Join(socketDir, fmt.Sprintf(".s.PGSQL.%d.lock", Port)))
		fmt.Fprintf(&b, "rm -f %s %s; ", pidFile, socketLock)
	}
	fmt.Fprintf(&b, "%s%s -D %s -c listen_addresses= -c unix_socket_directories=%s -c port=%d & exec %s %s",
		pgPrefix, pgBin, shQuote(data), shQuote(socketDir), Port, pgbouncerBin, shQuote(ini))
	return b.String()
}

// FindPgBouncer returns the path of the pgbouncer executable (PATH, else
// Debian's /usr/sbin) and its version line; the error wraps
// ErrNoPgBouncer when there is none.
func FindPgBouncer(ctx context.Context) (path, version string, err error) {
	path, err = exec.LookPath("pgbouncer")
	if err != nil {
		path = "/usr/sbin/pgbouncer"
		if _, err := os.Stat(path); err != nil {
			return "", "", ErrNoPgBouncer
		}
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", "", fmt.Errorf("postgres: %s --version: %w", path, err)
	}
	version, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	return path, version, nil
}

// pgbouncerLocalCommand makes a data directory in a.Dir (once: a restart
// keeps it), writes pgbouncer.ini there and returns sh running the pair,
// as user postgres (or nobody) when the bench runs as root. PostgreSQL's
// socket is in a.Dir; it runs under setpriv --pdeathsig=INT, so that it
// shuts down fast when PgBouncer (its parent after the exec) exits.
func pgbouncerLocalCommand(ctx context.Context, a bench.ServerArgs) ([]string, error) {
	inst, err := FindServer(ctx)
	if err != nil {
		return nil, err
	}
	pgb, _, err := FindPgBouncer(ctx)
	if err != nil {
		return nil, err
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return nil, fmt.Errorf("postgres: the pgbouncer pair needs setpriv (util-linux): %w", err)
	}
	data := filepath.Join(a.Dir, "data")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		if data, err = InitDB(ctx, inst, a.Dir); err != nil {
			return nil, err
		}
	}
	host, port, err := net.SplitHostPort(a.Listen)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("postgres: port %q: %w", port, err)
	}
	ini := filepath.Join(a.Dir, "pgbouncer.ini")
	if err := os.WriteFile(ini, []byte(pgbouncerIni(host, p, a.Dir)), 0o644); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	script := pairScript(shQuote(setpriv)+" --pdeathsig=INT -- ", shQuote(filepath.Join(inst.BinDir, "postgres")), data, a.Dir, shQuote(pgb), ini, waitForOldPostmaster)
	argv, _, err := asServerUser([]string{"/bin/sh", "-c", script})
	return argv, err
}

// PgBouncerImage builds (or reuses) monolock-bench/postgres-pgbouncer:<tag>:
// Image's PostgreSQL files and data directory plus the host's pgbouncer,
// sh (dash), rm with their shared libraries, and pgbouncer.ini
// (docker/postgres-pgbouncer.Dockerfile). The container's entrypoint runs
// the pair script with sh -c as 65534; arguments are not used.
func PgBouncerImage(ctx context.Context) (bench.Image, error) {
	inst, err := FindServer(ctx)
	if err != nil {
		return bench.Image{}, err
	}
	pgb, pgbVersion, err := FindPgBouncer(ctx)
	if err != nil {
		return bench.Image{}, err
	}
	rootfs, err := serverRootfs(ctx, inst)
	if err != nil {
		return bench.Image{}, err
	}
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		return bench.Image{}, fmt.Errorf("postgres: %w", err)
	}
	// rm, for the stale postmaster.pid a killed container leaves.
	rm, err := exec.LookPath("rm")
	if err != nil {
		return bench.Image{}, fmt.Errorf("postgres: the pgbouncer image needs rm: %w", err)
	}
	if rm, err = filepath.EvalSymlinks(rm); err != nil {
		return bench.Image{}, fmt.Errorf("postgres: %w", err)
	}
	bins := []string{pgb, sh, rm}
	libs, err := engine.HostLibraries(ctx, bins...)
	if err != nil {
		return bench.Image{}, err
	}
	have := map[string]bool{}
	for _, f := range rootfs {
		have[f.Name] = true
	}
	for _, p := range append(bins, libs...) {
		if have["rootfs"+p] {
			continue
		}
		have["rootfs"+p] = true
		f, err := engine.HostFile(p, "rootfs"+p)
		if err != nil {
			return bench.Image{}, err
		}
		rootfs = append(rootfs, f)
	}
	var dockerfile strings.Builder
	tmpl := template.Must(template.New("Dockerfile").Parse(docker.PostgresPgBouncer))
	script, err := json.Marshal(pairScript("", filepath.Join(inst.BinDir, "postgres"), dataInImage, socketInImage, pgb, pgbouncerIniInImage, removeOldPostmaster))
	if err != nil {
		return bench.Image{}, fmt.Errorf("postgres: %w", err)
	}
	if err := tmpl.Execute(&dockerfile, struct{ Sh, Script string }{sh, string(script)}); err != nil {
		return bench.Image{}, fmt.Errorf("postgres: Dockerfile: %w", err)
	}
	base := append([]engine.ContextFile{
		{Name: "Dockerfile", Mode: 0o644, Content: []byte(dockerfile.String())},
		{Name: "conf", Mode: 0o644, Content: []byte(confAppend + hbaConf)},
		{Name: "pgdata/pgbouncer.ini", Mode: 0o644, Content: []byte(pgbouncerIni("*", PgBouncerPort, socketInImage))},
	}, rootfs...)
	tag, err := engine.ContentTag(base)
	if err != nil {
		return bench.Image{}, err
	}
	img, err := engine.EnsureImage(ctx, PgBouncerImageName, tag, "host-pgbouncer "+pgbVersion+" + host-postgres "+inst.Version, func(ctx context.Context) ([]engine.ContextFile, error) {
		pgdata, err := initializedData(ctx, inst)
		if err != nil {
			return nil, err
		}
		files := append([]engine.ContextFile{base[0], base[2]}, rootfs...)
		return append(files, pgdata...), nil
	})
	return bench.Image(img), err
}
