package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// PgBouncerContender is the postgres-pgbouncer row: the session-level
// pg_advisory_lock as most code calls it, through PgBouncer's transaction
// pooling — the pitfall. The lock is taken by whichever server connection
// ran the SELECT, which goes back to PgBouncer's pool when the statement's
// transaction ends: another client's pg_advisory_lock on that connection
// is granted at once (advisory locks are re-entrant per session: two
// holders), the holder's pg_advisory_unlock may run on another connection
// (false: not held there), and a lock so left behind stays held by an
// idle server connection after every client has gone, until PgBouncer
// closes it (server_idle_timeout, 600s by default). It is measured, not
// fixed: the figures show what the pitfall does.
func PgBouncerContender() bench.Contender {
	c := pgbouncerContender("postgres-pgbouncer", "PostgreSQL advisory lock through PgBouncer (transaction pooling; pitfall)", "#8c6d1f", false)
	c.Pitfall = true
	c.Claims = results.OfKind(results.ClaimOther, []results.ClaimRule{{
		ID:        "postgres-pgbouncer-session-lock-shared",
		Claim:     "Session-level advisory locks do not work with PgBouncer's transaction pooling: the lock stays with the server connection, which the pool hands to other clients between transactions.",
		Statement: "postgres-pgbouncer (pg_advisory_lock through PgBouncer, pool_mode=transaction) with its holder paused: a second client is granted the lock while the holder still believes it holds it, at least once.",
		Threshold: "holds when double grants ≥ 1 in every repetition; fails when none in every repetition, i.e. PgBouncer never gave the second client the holder's server connection in this run (postgres, with a session of its own per client, has none)",
		Scenario:  "safety", Variant: "pause", Subject: "postgres-pgbouncer", Metric: results.SafetyMetrics.DoubleGrants.Name,
		Op: results.AtLeast, Than: results.ClaimBound{Value: 1},
		Spread: results.SpreadRange,
		Quote:  []results.ClaimQuote{{Contender: "postgres-pgbouncer-xact"}, {Contender: "postgres"}},
	}})
	return c
}

// PgBouncerXactContender is the postgres-pgbouncer-xact row: the form
// PgBouncer's transaction pooling supports, pg_advisory_xact_lock inside
// a transaction held for the lock's lifetime (BEGIN; SELECT
// pg_advisory_xact_lock(key); … COMMIT releases). The transaction pins
// one server connection, so a held or waiting lock takes one of
// PgBouncerPoolSize server connections and further clients queue in
// PgBouncer.
func PgBouncerXactContender() bench.Contender {
	c := pgbouncerContender("postgres-pgbouncer-xact", "PostgreSQL transaction advisory lock through PgBouncer (transaction pooling)", "#c9a43a", true)
	c.Claims = results.OfKind(results.ClaimOther, []results.ClaimRule{{
		ID:        "postgres-pgbouncer-xact-exclusive",
		Claim:     "Transaction-level advisory locks are safe behind PgBouncer in transaction pooling mode: the transaction keeps its server connection until it ends, and its end releases the lock.",
		Statement: "postgres-pgbouncer-xact (pg_advisory_xact_lock held in a transaction through PgBouncer, pool_mode=transaction) with its holder paused: no second client is granted the lock while the holder believes it holds it.",
		Threshold: "holds when double grants = 0 in every repetition; fails when ≥ 1 in every repetition",
		Scenario:  "safety", Variant: "pause", Subject: "postgres-pgbouncer-xact", Metric: results.SafetyMetrics.DoubleGrants.Name,
		Op: results.AtMost, Than: results.ClaimBound{Value: 0},
		Spread: results.SpreadRange,
		Quote:  []results.ClaimQuote{{Contender: "postgres-pgbouncer"}, {Contender: "postgres"}},
	}})
	return c
}

// pgbouncerContender is a row on PgBouncerServer: fenced as the postgres
// rows are (nextval after the grant; the xact row's in a transaction of
// its own, through a pool of its own), every statement with pgx's
// simple protocol (PgBouncer 1.18 has no prepared statements in
// transaction pooling).
func pgbouncerContender(name, label, colour string, xact bool) bench.Contender {
	cfg := Config{Fence: true, Xact: xact, SimpleProtocol: true}
	if xact {
		cfg.FenceDatabase = PgBouncerFenceDatabase
	}
	set := cfg.Settings()
	delete(set, "lease") // the runner records it
	set["key"] = "first 8 bytes of SHA-256(key_prefix + name), big-endian, as a signed bigint (KeyID)"
	set["protocol"] = "pgx simple protocol (default_query_exec_mode=simple_protocol): PgBouncer 1.18's transaction pooling has no prepared statements"
	set["pooler"] = "PgBouncer (host Debian package) pool_mode=transaction, default_pool_size=" + strconv.Itoa(PgBouncerPoolSize) + " (the tokens' entry " + PgBouncerFenceDatabase + ": pool_size=" + strconv.Itoa(PgBouncerFencePoolSize) + "), max_client_conn=1000, auth_type=any, to PostgreSQL on a Unix socket; the pair is one server (one process group locally, one container)"
	set["counters"] = CountsSource + " (read through PgBouncer)"
	set["server_settings"] = "default (Debian packages, keepalives from the operating system)"
	if xact {
		set["claim"] = "a pooled client connection held for the claim; BEGIN; SELECT pg_advisory_xact_lock(key) (blocks on the server inside the transaction, which pins one PgBouncer server connection)"
		set["release"] = "COMMIT (ends the transaction, which frees the lock; a lost connection aborts it)"
		set["token"] = "always on: nextval('" + FenceSequence + "') once pg_advisory_xact_lock is granted, in a transaction of its own through PgBouncer's " + PgBouncerFenceDatabase + " entry (pool_size=" + strconv.Itoa(PgBouncerFencePoolSize) + "), one more round trip: its commit flushes it to the WAL before it is handed out, where a nextval inside the held transaction could be handed out again after a server crash"
	} else {
		set["claim"] = "a pooled client connection held for the claim; SELECT pg_advisory_lock(key) (session level: the lock belongs to whichever PgBouncer server connection ran it, which returns to PgBouncer's pool when the statement ends — the pitfall)"
		set["release"] = "SELECT pg_advisory_unlock(key), on whichever server connection PgBouncer gives the client then (false when it is not the one holding the lock: the lock stays)"
		set["token"] = "always on: nextval('" + FenceSequence + "') batched after pg_advisory_lock in the same round trip"
	}
	return bench.Contender{
		Name: name, Label: label, Family: "postgres", Colour: colour,
		Server:      PgBouncerServer,
		NoLockWatch: noLockWatch,
		Settings:    set,
		Caps:        PgBouncerCaps,
		ServerSettings: func(ctx context.Context, servers []bench.Server, _ time.Duration) (results.Settings, error) {
			if len(servers) != 1 {
				return nil, fmt.Errorf("postgres: want one server, got %d", len(servers))
			}
			p, err := dialProbe(ctx, servers[0].Addr(), true)
			if err != nil {
				return nil, err
			}
			defer p.Close(context.WithoutCancel(ctx))
			return p.Settings(ctx)
		},
		New: func(ctx context.Context, addrs []string, lease time.Duration, _ bench.OpenOptions) (bench.Locker, error) {
			if len(addrs) != 1 {
				return nil, fmt.Errorf("postgres: want one server, got %d", len(addrs))
			}
			c := cfg
			c.Addr, c.Lease = addrs[0], lease
			return New(ctx, c)
		},
		MaxSessions:       DefaultPoolSize,
		MaxSessionsReason: "each session holds one pooled client connection to PgBouncer: pool_size " + strconv.Itoa(DefaultPoolSize) + ", below PgBouncer's max_client_conn (1000)",
		HeldOnServer:      heldOnServer(true),
		Counters: func(servers []bench.Server) (bench.Coordinator, error) {
			if len(servers) != 1 {
				return nil, fmt.Errorf("%w: want one server, got %d", bench.ErrNoCounters, len(servers))
			}
			return &counters{addr: servers[0].Addr(), simple: true}, nil
		},
		Notes: []string{
			"PgBouncer's transaction pooling hands a server connection to another client whenever a transaction ends: session-level state (advisory locks, prepared statements, SET) does not follow the client. Only pg_advisory_xact_lock held inside a transaction stays with its client.",
			"A held or waiting transaction lock pins one of PgBouncer's " + strconv.Itoa(PgBouncerPoolSize) + " server connections for its whole life: more clients than that queue in PgBouncer before they reach the lock's own wait.",
			"An open transaction for the lock's lifetime holds back VACUUM's horizon and counts against idle_in_transaction_session_timeout where one is set.",
		},
	}
}

// PgBouncerCaps are the caps of both PgBouncer rows, for the suite's time
// budget (TestPlanBudget: 57m19s to 59m14s of 60 min with both rows).
// They run what separates the two forms of the lock: who is granted and
// when (fairness; handover after a graceful release and a crash), and
// what a paused or lost holder leaves behind (safety's pause and host
// loss, where the pitfall's early grants and stranded locks show). Chaos
// does not fit the suite (83 s a step); the soak, on its own budget, runs
// it. The rest is postgres's server behind one more hop, which the
// postgres rows measure.
var PgBouncerCaps = []bench.Cap{
	{Scenario: "latency", Variant: "*", Reason: "budget: an uncontended claim is postgres's plus PgBouncer's hop on loopback; not measured in the suite (the postgres rows measure the lock's own latency)"},
	{Scenario: "throughput", Variant: "*", Reason: "budget: distinct keys measure PgBouncer's queueing for its 4 server connections rather than the lock; not measured in the suite"},
	{Scenario: "workload", Variant: "*", Reason: "budget: a workload's steady state is postgres's lock behind one more hop; not measured in the suite"},
	{Scenario: "scale", Variant: "*", Reason: "budget: idle and queued sessions are bounded by PgBouncer's 4 server connections (the xact row) or are not sessions at all (the pitfall): nothing of the lock's own scale"},
	{Scenario: "failover", Variant: "*", Reason: "budget: a restart of the pair ends every server session, which frees every advisory lock as postgres's restart does (the postgres rows measure it)"},
	{Scenario: "handover", Variant: "freeze", Reason: "budget: a frozen holder's kernel answers TCP keep-alives and PgBouncer keeps its server connection, as postgres keeps the session (no grant within the bound for postgres in the full run 20261203T151155Z)"},
	{Scenario: "handover", Variant: "host-loss", Reason: "budget: a lost holder's client connection to PgBouncer ends on TCP's timers as postgres's does (postgres and postgres-keepalive measure them); safety host-loss runs it"},
	{Scenario: "chaos", Variant: "*", SuiteOnly: true, Reason: "budget: a chaos step is 83 s per contender, and the full run has under a minute of slack with the rows' other variants (TestPlanBudget: 57m19s–59m14s of 60 min); the soak (make bench-chaos), on a budget of its own, runs both rows, one after the other in a lane of their own (PgBouncer and its PostgreSQL are one server); safety's pause variant counts the pitfall's early grants and stranded locks"},
	{Scenario: "safety", Variant: "clock-jump*", Reason: "PostgreSQL has no lease: a clock jump changes nothing of the pair"},
}
