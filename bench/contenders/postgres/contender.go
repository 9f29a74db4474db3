package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// Server is the PostgreSQL server of the postgres contender, with the
// defaults of the Debian packages and of the operating system for
// noticing a dead client; KeepaliveServer is the same server with
// TunedKeepalives, for the postgres-keepalive contender.
var (
	Server          = serverSpec("postgres")
	KeepaliveServer = serverSpec("postgres-keepalive", TunedKeepalives...)
)

// serverSpec is the host's PostgreSQL with settings ("name=value"): on the
// local backend initdb into the server's directory and postgres as a
// non-root user (LocalCommand); in containers the scratch image (Image)
// with ContainerCmd. Ready once it answers SELECT 1. A graceful stop is
// SIGINT, the fast shutdown pg_ctl stop sends: SIGTERM is the smart
// shutdown, which waits for every client to disconnect.
func serverSpec(name string, settings ...string) *bench.ServerSpec {
	return &bench.ServerSpec{
		Name: name,
		Args: func(bench.ServerArgs) []string { return ContainerCmd(settings...) },
		Command: func(ctx context.Context, a bench.ServerArgs) ([]string, error) {
			return LocalCommand(ctx, a.Dir, a.Listen, settings...)
		},
		Image:      Image,
		Port:       Port,
		Ready:      func(ctx context.Context, addr, _ string) error { return ping(ctx, addr) },
		Version:    version,
		StopSignal: syscall.SIGINT,
	}
}

// version asks the server at addr for SHOW server_version.
func version(ctx context.Context, addr string) (string, error) {
	v, err := serverVersion(ctx, addr, false)
	if err != nil {
		return "", err
	}
	return "PostgreSQL " + v, nil
}

// serverVersion asks the server at addr for SHOW server_version, with
// pgx's simple protocol when simple is set.
func serverVersion(ctx context.Context, addr string, simple bool) (string, error) {
	p, err := dialProbe(ctx, addr, simple)
	if err != nil {
		return "", err
	}
	defer p.Close(context.WithoutCancel(ctx))
	var v string
	if err := p.conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "", fmt.Errorf("postgres: SHOW server_version: %w", err)
	}
	return v, nil
}

// Contender is the postgres row of the contender table: advisory locks on
// a server with default keepalives.
func Contender() bench.Contender {
	return contender("postgres", "PostgreSQL advisory lock", "#6b7a1f", Server, nil)
}

// KeepaliveContender is the postgres-keepalive row: the same lock on a
// server with TunedKeepalives, as the comparison page suggests for
// noticing a dead client within seconds.
func KeepaliveContender() bench.Contender {
	c := contender("postgres-keepalive", "PostgreSQL advisory lock, tuned keepalives", "#a9b84a", KeepaliveServer, TunedKeepalives)
	c.Caps = KeepaliveCaps
	return c
}

// KeepaliveCaps are the caps of postgres-keepalive, for the suite's time
// budget: a frozen holder and a workload's holders are postgres's in
// every run (its kernel answers the keep-alives; a workload loses no
// client), and in quick runs its handover and safety steps wait
// for the server to notice a lost client (~5s each, twice the lease-bound
// contenders'), and its failover is postgres's server restart, which the
// full run measures. (Its quick chaos step runs: one client pause, about
// 7 s, so that every lock takes a chaos step.)
var KeepaliveCaps = []bench.Cap{
	{Scenario: "handover", Variant: "freeze", Reason: "a frozen holder's kernel answers TCP keep-alives, so the server keeps its session as postgres's does: no grant within the bound for both in the full run 20261203T151155Z (22 s); host-loss measures the keep-alives"},
	{Scenario: "workload", Variant: "*", Reason: "a workload's holders do not fail: tuned keep-alives act only on a lost client, so the steady state is postgres's (in the full run 20261203T151155Z: cron p50 3.58 and 3.47 ms; hot-counter, job-queue and leader-election both in the leaders' tie)"},
	{Scenario: "safety", Variant: "pause", Reason: "a paused holder's kernel answers TCP keep-alives, so the server keeps its session as postgres's does: not granted in every trial for both in the full run 20261203T151155Z (20 s); host-loss measures the keep-alives"},
	{Scenario: "handover", Variant: "*", QuickOnly: true, Reason: "quick: the full run measures how soon tuned keepalives free a lost holder's lock (~5s per step)"},
	{Scenario: "safety", Variant: "*", QuickOnly: true, Reason: "quick: the full run measures how soon tuned keepalives free a lost holder's lock (~5s per step)"},
	{Scenario: "failover", Variant: "*", QuickOnly: true, Reason: "quick: a server restart ends every session as it does postgres's (the full run measures it)"},
}

// noLockWatch is why the chaos history has no server record of an
// advisory lock's grants and ends.
const noLockWatch = "not recorded: PostgreSQL announces no advisory lock's grant or end (pg_locks can only be polled, missing short holds), and a session lock has no lease to expire early"

// contender is a postgres row on spec. It always fences (Config.Fence):
// the sequence's nextval rides in the same round trip as
// pg_advisory_lock, so the token costs no extra round trip and every
// scenario, the fenced store's included, measures the same lock.
func contender(name, label, colour string, spec *bench.ServerSpec, tuned []string) bench.Contender {
	set := Config{Fence: true}.Settings()
	delete(set, "lease") // the runner records it
	set["key"] = "pg_advisory_lock(bigint): the first 8 bytes of SHA-256(key_prefix + name), big-endian, as a signed bigint (KeyID)"
	set["token"] = "always on: nextval('" + FenceSequence + "') batched after pg_advisory_lock in the same round trip (no native token; a careful user's sequence, costing no extra round trip)"
	set["counters"] = CountsSource
	set["server_settings"] = "default (Debian packages, keepalives from the operating system)"
	if len(tuned) > 0 {
		set["server_settings"] = strings.Join(tuned, " ") + " (as the PostgreSQL comparison page suggests)"
	}
	return bench.Contender{
		Name: name, Label: label, Family: "postgres", Colour: colour,
		Server:         spec,
		NoLockWatch:    noLockWatch,
		Settings:       set,
		ServerSettings: serverSettings,
		New: func(ctx context.Context, addrs []string, lease time.Duration, _ bench.OpenOptions) (bench.Locker, error) {
			if len(addrs) != 1 {
				return nil, fmt.Errorf("postgres: want one server, got %d", len(addrs))
			}
			return New(ctx, Config{Addr: addrs[0], Lease: lease, Fence: true})
		},
		MaxSessions:       DefaultPoolSize,
		MaxSessionsReason: "each session holds one pooled connection, served by a backend process of its own: pool_size " + strconv.Itoa(DefaultPoolSize) + ", below PostgreSQL's default max_connections (100)",
		Counters:          newCounters,
		HeldOnServer:      heldOnServer(false),
		Claims:            results.OfKind(results.ClaimOther, Claims(name)),
		Notes:             Notes(),
	}
}

// serverSettings reads RecordedSettings from the running server over TCP
// (tcp_keepalives_* of 0 show the operating system's values).
func serverSettings(ctx context.Context, servers []bench.Server, _ time.Duration) (results.Settings, error) {
	if len(servers) != 1 {
		return nil, fmt.Errorf("postgres: want one server, got %d", len(servers))
	}
	p, err := NewProbe(ctx, servers[0].Addr())
	if err != nil {
		return nil, err
	}
	defer p.Close(context.WithoutCancel(ctx))
	return p.Settings(ctx)
}

// counters is a Probe as a bench.Coordinator: commands are transactions,
// waiting the advisory-lock requests not granted (pg_locks). PostgreSQL
// counts no calls of pg_advisory_lock, so there are no attempts. The
// Probe connects on the first read and again after a failed one.
type counters struct {
	addr   string
	simple bool // pgx's simple protocol (through PgBouncer)
	mu     sync.Mutex
	p      *Probe
}

func newCounters(servers []bench.Server) (bench.Coordinator, error) {
	if len(servers) != 1 {
		return nil, fmt.Errorf("%w: want one server, got %d", bench.ErrNoCounters, len(servers))
	}
	return &counters{addr: servers[0].Addr()}, nil
}

// Counts implements bench.Coordinator.
func (c *counters) Counts(ctx context.Context) (bench.Counts, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p == nil {
		p, err := dialProbe(ctx, c.addr, c.simple)
		if err != nil {
			return bench.Counts{}, err
		}
		c.p = p
	}
	n, err := c.p.Counts(ctx)
	var w int64
	if err == nil {
		w, err = c.p.Waiters(ctx)
	}
	if err != nil {
		c.p.Close(context.WithoutCancel(ctx))
		c.p = nil
		return bench.Counts{}, err
	}
	return bench.Counts{Commands: n.Transactions, Waiting: w}, nil
}

// Close implements bench.Coordinator.
func (c *counters) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p == nil {
		return nil
	}
	err := c.p.Close(context.Background())
	c.p = nil
	return err
}
