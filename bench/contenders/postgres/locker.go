// Package postgres is the PostgreSQL advisory-lock contender's building
// blocks: the lock, the server and the coordinator's counters.
//
// The lock is what a user builds from the manual: a connection taken from
// a pool (pgx v5's pgxpool) for the whole claim, SELECT
// pg_advisory_lock(key) on it (the call blocks on the server until the
// lock is granted), SELECT pg_advisory_unlock(key) on release, and the
// connection back to the pool. Names become the bigint key by KeyID: the
// first 8 bytes of SHA-256(prefix + name), big-endian, as a signed 64-bit
// integer (a collision of two names would silently be one lock; at 2^-64
// per pair it is ignored). Advisory locks have no fencing token: with
// Config.Fence a grant also takes nextval of a sequence after the lock is
// held, as a careful user would, and that is the token: on the same
// connection for the session-level lock (its statement commits, and so
// flushes the sequence's WAL, before the token is handed out), in a
// transaction of its own for the transaction-level lock (see Config.Xact). Lost closes when a watchdog's ping on the held connection
// fails, or none has succeeded for a lease.
//
// The server is the host's PostgreSQL from Debian's packages: a child
// process of the local backend (LocalCommand) or a scratch image (Image).
package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// Defaults of Config.
const (
	DefaultKeyPrefix = "monolock-bench:"
	// DefaultPoolSize is large enough that 64 workers never queue for a
	// connection, and below PostgreSQL's default max_connections (100,
	// three of them reserved for superusers).
	DefaultPoolSize = 80
	// FenceSequence is the sequence Fence draws tokens from.
	FenceSequence = "monolock_bench_fence"
)

// SQLSTATEs of a CREATE SEQUENCE IF NOT EXISTS that lost a race with a
// concurrent one: the catalog's unique index, or the name's check once
// the winner committed.
const (
	uniqueViolation = "23505"
	duplicateTable  = "42P07"
)

// ErrNotHeld is returned by Release when pg_advisory_unlock found the lock
// not held by the session (it cannot happen while the connection lives).
var ErrNotHeld = errors.New("postgres: lock was not held at release")

// Config configures a Locker.
type Config struct {
	// Addr is the server's host:port. Required.
	Addr string
	// Lease is the run's lease. PostgreSQL has none; it paces the
	// watchdog: a ping on the held connection every Lease/3, lost when
	// one fails or none succeeded for a Lease. Required.
	Lease time.Duration
	// Fence makes every grant draw a token from FenceSequence (one
	// nextval after the lock; the sequence is created by New). Off by
	// default: a plain claim has no token.
	Fence bool
	// FenceDatabase is the database a fenced Xact claim draws its token
	// through; default Database. Behind PgBouncer it names an entry with
	// a pool of its own, so that a holder's token never waits for a
	// server connection that its own lock's waiters pin.
	FenceDatabase string
	// PoolSize is the pool's maximum number of connections; default
	// DefaultPoolSize. Each held or waiting claim takes one.
	PoolSize int
	// KeyPrefix is hashed with every name; default DefaultKeyPrefix.
	KeyPrefix string
	// Xact takes the transaction-level lock: BEGIN, then
	// pg_advisory_xact_lock(key), held until Release commits (a lost
	// connection aborts the transaction, which frees it). This is the
	// form that stays on one server session behind a transaction-pooling
	// PgBouncer. Off by default: the session-level pg_advisory_lock.
	// With Fence, the token is drawn after the grant in a transaction of
	// its own on a second connection, one more round trip: a nextval
	// inside the held transaction is not flushed to the WAL until that
	// transaction commits, so a server crash while the lock is held could
	// hand the same token out again (the soak 20261207T164238Z: token
	// 1717 granted three times across two kills). A round trip on the held
	// transaction then proves it outlived the draw: without it a holder
	// whose transaction the server ended between its grant and its draw
	// (its client cut off) still got a token from the second connection
	// and believed it held the lock while the next holder was granted,
	// and the fence took its writes until the new holder's first (the
	// soak 20261207T232337Z: 2 stale writes accepted, 7 running double
	// holders, all under client partitions).
	Xact bool
	// SimpleProtocol sends every statement with pgx's simple protocol (no
	// prepared statements), as PgBouncer's transaction pooling before
	// 1.21 requires. Off by default: pgx's statement cache.
	SimpleProtocol bool
}

func (c Config) withDefaults() Config {
	if c.PoolSize <= 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	if c.FenceDatabase == "" {
		c.FenceDatabase = Database
	}
	return c
}

// KeyID is the advisory-lock key of name: the first 8 bytes of
// SHA-256(name), big-endian, as a signed 64-bit integer.
func KeyID(name string) int64 {
	sum := sha256.Sum256([]byte(name))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// Settings describes the configuration for results.json.
func (c Config) Settings() results.Settings {
	c = c.withDefaults()
	token := "none (advisory locks have none)"
	if c.Fence {
		token = "nextval('" + FenceSequence + "') on the held connection after the grant, as a careful user would (not native)"
	}
	if c.Fence && c.Xact {
		token = "nextval('" + FenceSequence + "') after the grant in a transaction of its own through database " + c.FenceDatabase + ", committed (and so flushed to the WAL), handed out once the held transaction answers after it, as a careful user would (not native)"
	}
	return results.Settings{
		"client":     "github.com/jackc/pgx/v5 pgxpool",
		"claim":      "a pooled connection held for the claim; SELECT pg_advisory_lock(key) (session level, blocks on the server)",
		"key":        "first 8 bytes of SHA-256(key_prefix + name), big-endian, as bigint",
		"release":    "SELECT pg_advisory_unlock(key), connection back to the pool",
		"watchdog":   "ping (empty query) on the held connection every lease/3; lost when one fails or none succeeded for a lease",
		"token":      token,
		"wait":       "server-side lock wait; no documented order among waiters",
		"give_up":    "never (waits until the harness cancels)",
		"pool_size":  strconv.Itoa(c.PoolSize),
		"key_prefix": c.KeyPrefix,
		"lease":      c.Lease.String() + " (paces the watchdog only: PostgreSQL has no lease)",
	}
}

// Locker is a PostgreSQL advisory-lock contender. It is safe for
// concurrent use.
type Locker struct {
	cfg  Config
	pool *pgxpool.Pool
	// fence draws the tokens of fenced Xact claims; nil otherwise.
	fence *pgxpool.Pool
}

// New returns a Locker for the server at cfg.Addr. With cfg.Fence it
// connects and creates FenceSequence if missing; otherwise it does not
// connect until first use.
func New(ctx context.Context, cfg Config) (*Locker, error) {
	cfg = cfg.withDefaults()
	if cfg.Lease <= 0 {
		return nil, fmt.Errorf("postgres: lease %v must be positive", cfg.Lease)
	}
	pc, err := pgxpool.ParseConfig(connString(cfg.Addr, cfg.SimpleProtocol))
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pc.MaxConns = int32(cfg.PoolSize)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if cfg.Fence {
		// IF NOT EXISTS is not safe against a concurrent creation: the
		// loser of the race gets a unique violation on pg_class or
		// "relation already exists", and the sequence exists all the same (Lockers opened side by side, one
		// per client of a workload).
		var pe *pgconn.PgError
		if _, err := pool.Exec(ctx, "CREATE SEQUENCE IF NOT EXISTS "+FenceSequence); err != nil &&
			!(errors.As(err, &pe) && (pe.Code == uniqueViolation || pe.Code == duplicateTable)) {
			pool.Close()
			return nil, fmt.Errorf("postgres: create sequence: %w", err)
		}
	}
	l := &Locker{cfg: cfg, pool: pool}
	if cfg.Fence && cfg.Xact {
		fc := pc.Copy()
		fc.ConnConfig.Database = cfg.FenceDatabase
		if l.fence, err = pgxpool.NewWithConfig(ctx, fc); err != nil {
			pool.Close()
			return nil, fmt.Errorf("postgres: %w", err)
		}
	}
	return l, nil
}

// Acquire implements bench.Locker. When ctx ends during the wait, pgx
// interrupts the query by closing the connection, which the pool then
// drops, so the server withdraws the request (or frees a lock granted at
// that instant).
func (l *Locker) Acquire(ctx context.Context, key string) (bench.Held, error) {
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("postgres: connection: %w", err)
	}
	id := KeyID(l.cfg.KeyPrefix + key)
	h := &held{conn: conn, key: id, lease: l.cfg.Lease, xact: l.cfg.Xact}
	if l.cfg.Xact {
		// One round trip: BEGIN, then the lock, which blocks inside the
		// transaction. The token follows in a transaction of its own,
		// whose commit flushes it to the WAL, then one more round trip on
		// the held transaction proves it still held the lock after the
		// draw.
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		b.Queue("SELECT pg_advisory_xact_lock($1)", id)
		err = conn.SendBatch(ctx, b).Close()
		if err == nil && l.cfg.Fence {
			h.token, err = l.xactToken(ctx, conn)
			h.fenced = true
		}
	} else if l.cfg.Fence {
		// One round trip: the server runs the two statements in order,
		// so nextval happens only once the lock is held.
		b := &pgx.Batch{}
		b.Queue("SELECT pg_advisory_lock($1)", id)
		var tok int64
		b.Queue("SELECT nextval('" + FenceSequence + "')").QueryRow(func(row pgx.Row) error { return row.Scan(&tok) })
		err = conn.SendBatch(ctx, b).Close()
		h.token, h.fenced = uint64(tok), true
	} else {
		_, err = conn.Exec(ctx, "SELECT pg_advisory_lock($1)", id)
	}
	if err != nil {
		conn.Conn().Close(context.Background()) // the server frees whatever the session holds
		conn.Release()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("postgres: lock %s: %w", key, err)
	}
	h.start()
	return h, nil
}

// xactToken draws the token of the transaction-level lock that conn's
// transaction holds, in a transaction of its own (committed, so flushed
// to the WAL), and hands it out only once the held transaction answers
// after the draw: one that ended meanwhile (its client cut off) has let
// the next holder in, and its token would fence nothing out.
func (l *Locker) xactToken(ctx context.Context, conn *pgxpool.Conn) (uint64, error) {
	var tok int64
	if err := l.fence.QueryRow(ctx, "SELECT nextval('"+FenceSequence+"')").Scan(&tok); err != nil {
		return 0, err
	}
	if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
		return 0, fmt.Errorf("the held transaction after the token's draw: %w", err)
	}
	return uint64(tok), nil
}

// Close implements bench.Locker: it closes the pool, waiting until every
// held claim is released (pgxpool returns only then).
func (l *Locker) Close() error {
	l.pool.Close()
	if l.fence != nil {
		l.fence.Close()
	}
	return nil
}

type held struct {
	conn   *pgxpool.Conn
	key    int64
	lease  time.Duration
	token  uint64
	fenced bool
	xact   bool

	lost     chan struct{}
	lostOnce sync.Once
	stop     chan struct{}
	done     chan struct{}

	once sync.Once
	err  error
}

func (h *held) start() {
	h.lost, h.stop, h.done = make(chan struct{}), make(chan struct{}), make(chan struct{})
	go h.watch()
}

// watch pings the held connection every lease/3 until stopped; a failed
// ping, or none succeeding for a lease, closes lost.
func (h *held) watch() {
	defer close(h.done)
	tick := time.NewTicker(max(h.lease/3, time.Millisecond))
	defer tick.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-h.stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithDeadline(context.Background(), lastOK.Add(h.lease))
		err := h.conn.Conn().PgConn().Ping(ctx)
		cancel()
		if err != nil {
			h.markLost()
			return
		}
		lastOK = time.Now()
	}
}

func (h *held) markLost() { h.lostOnce.Do(func() { close(h.lost) }) }

// Token is the fence sequence's value for this grant, with Config.Fence.
func (h *held) Token() (uint64, bool) { return h.token, h.fenced }

// Lost is closed when the watchdog finds the held connection dead, and
// as Release begins.
func (h *held) Lost() <-chan struct{} { return h.lost }

// Release stops the watchdog, unlocks and gives the connection back to
// the pool (which drops it if it is broken: the server then frees the
// lock as the session ends). Only the first call acts.
func (h *held) Release(ctx context.Context) error {
	h.once.Do(func() {
		close(h.stop)
		<-h.done
		h.markLost()
		ok := true
		var err error
		if h.xact {
			_, err = h.conn.Exec(ctx, "COMMIT")
		} else {
			err = h.conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", h.key).Scan(&ok)
		}
		if err != nil {
			h.conn.Conn().Close(context.Background())
			h.err = fmt.Errorf("postgres: unlock: %w", err)
		} else if !ok {
			h.err = ErrNotHeld
		}
		h.conn.Release()
	})
	return h.err
}
