package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// RecordedSettings are the server settings ServerSettings reads with SHOW:
// the ones that decide when the server notices a dead client (and so
// frees its locks), and the connection limit a claim per connection meets.
// Over TCP, a tcp_* value of 0 in postgresql.conf shows the operating
// system's value for the socket.
var RecordedSettings = []string{
	"server_version",
	"tcp_keepalives_idle",
	"tcp_keepalives_interval",
	"tcp_keepalives_count",
	"tcp_user_timeout",
	"idle_session_timeout",
	"idle_in_transaction_session_timeout",
	"max_connections",
	"max_locks_per_transaction",
	"fsync",
	"synchronous_commit",
}

// CountsSource says what Counts holds, for results.json.
const CountsSource = "PostgreSQL pg_stat_database: xact_commit + xact_rollback summed over databases " +
	"(every statement outside a transaction block is a transaction, the Probe's own reads included; " +
	"backends report when idle, at most once a second, else 10s later, and when they exit); pg_locks: advisory requests not granted"

// Counts are cumulative counters of a PostgreSQL server.
type Counts struct {
	// Transactions is xact_commit + xact_rollback over every database:
	// each lock, unlock, fence nextval and watchdog ping is one (a batch
	// of lock and nextval is one). PostgreSQL counts no calls of built-in
	// functions, so attempts are not separable; each claim makes one
	// pg_advisory_lock call, which waits on the server.
	Transactions int64
}

// Probe reads a server's counters and settings over one connection. It
// is not safe for concurrent use.
type Probe struct{ conn *pgx.Conn }

// NewProbe connects to the server at addr (host:port).
func NewProbe(ctx context.Context, addr string) (*Probe, error) { return dialProbe(ctx, addr, false) }

// dialProbe is NewProbe, with pgx's simple protocol when simple is set
// (through PgBouncer's transaction pooling).
func dialProbe(ctx context.Context, addr string, simple bool) (*Probe, error) {
	conn, err := pgx.Connect(ctx, connString(addr, simple))
	if err != nil {
		return nil, fmt.Errorf("postgres: probe: %w", err)
	}
	return &Probe{conn: conn}, nil
}

// Close closes the Probe's connection.
func (p *Probe) Close(ctx context.Context) error { return p.conn.Close(ctx) }

// Counts reads the cumulative counters. Statistics reach the view late:
// a backend reports its transactions when it goes idle, but at most once
// a second, else 10 seconds later (PostgreSQL 15's PGSTAT_MIN_INTERVAL and
// PGSTAT_IDLE_INTERVAL), and when it exits. Take deltas over windows much
// longer than 10s, or close the Locker (its backends exit and report)
// before the last read.
func (p *Probe) Counts(ctx context.Context) (Counts, error) {
	var c Counts
	err := p.conn.QueryRow(ctx, "SELECT coalesce(sum(xact_commit + xact_rollback), 0)::bigint FROM pg_stat_database").Scan(&c.Transactions)
	if err != nil {
		return Counts{}, fmt.Errorf("postgres: pg_stat_database: %w", err)
	}
	return c, nil
}

// Waiters returns the advisory-lock requests the server has not granted
// (acquires waiting in pg_advisory_lock).
func (p *Probe) Waiters(ctx context.Context) (int64, error) {
	var n int64
	err := p.conn.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: pg_locks: %w", err)
	}
	return n, nil
}

// Held returns those of keys whose advisory locks (KeyID(prefix + key),
// the bigint form) are granted on the server, by whichever session: a
// lock left on a pooled server connection shows here after its client
// has gone.
func (p *Probe) Held(ctx context.Context, prefix string, keys []string) ([]string, error) {
	var held []string
	for _, key := range keys {
		id := KeyID(prefix + key)
		var n int64
		err := p.conn.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND classid::bigint = $1 AND objid::bigint = $2",
			int64(uint32(uint64(id)>>32)), int64(uint32(id))).Scan(&n)
		if err != nil {
			return nil, fmt.Errorf("postgres: pg_locks: %w", err)
		}
		if n > 0 {
			held = append(held, key)
		}
	}
	return held, nil
}

// heldOnServer is a row's bench.Contender.HeldOnServer: its keys'
// advisory locks in pg_locks, read on a connection of its own (through
// PgBouncer with simple, where every server connection sees pg_locks).
func heldOnServer(simple bool) func(ctx context.Context, servers []bench.Server, keys []string) ([]string, error) {
	return func(ctx context.Context, servers []bench.Server, keys []string) ([]string, error) {
		if len(servers) != 1 {
			return nil, fmt.Errorf("postgres: want one server, got %d", len(servers))
		}
		p, err := dialProbe(ctx, servers[0].Addr(), simple)
		if err != nil {
			return nil, err
		}
		defer p.Close(context.WithoutCancel(ctx))
		return p.Held(ctx, DefaultKeyPrefix, keys)
	}
}

// Settings reads RecordedSettings with SHOW, for results.json (keys
// prefixed "server."). Read it over TCP, as the Locker connects, so the
// tcp_* values are those of a client socket.
func (p *Probe) Settings(ctx context.Context) (results.Settings, error) {
	s := results.Settings{}
	for _, name := range RecordedSettings {
		var v string
		if err := p.conn.QueryRow(ctx, "SHOW "+name).Scan(&v); err != nil {
			return nil, fmt.Errorf("postgres: SHOW %s: %w", name, err)
		}
		s["server."+name] = v
	}
	return s, nil
}
