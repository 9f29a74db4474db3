package postgres

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
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

// connString is ConnString, with pgx's simple protocol when simple is
// set (PgBouncer's transaction pooling has no prepared statements).
func connString(addr string, simple bool) string {
	if simple {
		return ConnString(addr) + " default_query_exec_mode=simple_protocol"
	}
	return ConnString(addr)
}
