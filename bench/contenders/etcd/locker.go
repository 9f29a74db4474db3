// Package etcd is the etcd contender's building blocks: the lock, the
// server and the coordinator's counters.
//
// The lock is etcd's own recipe, go.etcd.io/etcd/client/v3/concurrency, as
// a user would take it from the documentation: a Session (a lease kept
// alive by the client) with a TTL of the run's lease rounded up to whole
// seconds (etcd's TTLs are whole seconds), and Mutex.Lock / Mutex.Unlock
// on it. A session serves one claim at a time and is kept for the next
// (one session per worker, as a careful user runs it), so a claim costs
// the lock's writes, not a lease grant and revoke. Waiters queue by the creation revision of their key
// and watch their predecessor, so a release wakes exactly the next waiter.
// The fencing token is the lock key's creation revision, which rises
// strictly from one holder to the next. Lost is the session's Done: the
// keep-alive failed or the lease expired.
//
// The server is etcd v3.7.3 built from the Go module in docker/etcd (a
// module of its own) into a static binary (BuildServer) and a scratch
// image (Image); the local backend runs its members as child processes
// (Server.Command).
package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// Defaults of Config.
const (
	DefaultKeyPrefix   = "/monolock-bench/"
	DefaultDialTimeout = 5 * time.Second
)

// Config configures a Locker.
type Config struct {
	// Endpoints are the members' client host:port addresses. Required.
	Endpoints []string
	// Lease is the run's lease; the session TTL is TTLSeconds(Lease).
	// Required.
	Lease time.Duration
	// KeyPrefix is put before every lock name; default DefaultKeyPrefix.
	// The mutex's keys are <prefix><name>/<lease id in hex>.
	KeyPrefix string
	// DialTimeout bounds connecting to the cluster (New does not wait for
	// it); default DefaultDialTimeout. The client library also uses
	// DialTimeout + 1s as a new lease's keep-alive deadline until the
	// first keep-alive answer, so Lost can take that long.
	DialTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	return c
}

// TTLSeconds is the session TTL etcd is given for lease: lease rounded up
// to whole seconds (etcd lease TTLs are integers), at least 1. A 1.5s
// lease becomes 2s: etcd detects a dead holder only that late.
func TTLSeconds(lease time.Duration) int64 {
	s := int64((lease + time.Second - 1) / time.Second)
	return max(s, 1)
}

// Settings describes the configuration for results.json: both the run's
// lease and the TTL etcd is given are recorded.
func (c Config) Settings() results.Settings {
	c = c.withDefaults()
	return results.Settings{
		"client":        "go.etcd.io/etcd/client/v3 " + ServerVersion + ", concurrency.Session + concurrency.Mutex",
		"claim":         "a Session (lease + KeepAlive stream) per concurrent claim: an idle one of the Locker, else a new one (lease Grant); then Mutex.Lock (one Txn; a waiter watches the key created just before its own)",
		"lease":         c.Lease.String(),
		"ttl":           strconv.FormatInt(TTLSeconds(c.Lease), 10) + "s (the lease rounded up to whole seconds, as etcd requires)",
		"keepalive":     "client library's LeaseKeepAlive stream, every TTL/3",
		"token":         "creation revision of the lock key (strictly increasing across holders)",
		"lost":          "Session.Done(): the client saw no keep-alive answer for a TTL (before the first answer: dial_timeout + 1s) or the lease was revoked",
		"dial_timeout":  c.DialTimeout.String(),
		"release":       "Mutex.Unlock (Delete); the session is kept for the Locker's next claim (its lease revoked when the unlock fails or the Locker closes), as etcd's documentation uses one session for many locks",
		"wait":          "server-side order by key creation revision; the waiter watches its predecessor (no polling)",
		"give_up":       "never (waits until the harness cancels)",
		"endpoints":     strconv.Itoa(len(c.Endpoints)) + " members, one client balancing over all",
		"key_prefix":    c.KeyPrefix,
		"server_flags":  strings.Join(ServerFlags, " "),
		"server_module": ServerModule + " (go.etcd.io/etcd/server/v3 v" + ServerVersion + ", etcdmain)",
	}
}

// Locker is an etcd lock contender. It is safe for concurrent use.
type Locker struct {
	cfg    Config
	ttl    int64
	client *clientv3.Client

	mu     sync.Mutex
	idle   []*concurrency.Session // sessions no claim uses
	closed bool
}

// New returns a Locker for the cluster at cfg.Endpoints; it does not wait
// for the cluster to answer.
func New(cfg Config) (*Locker, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	if cfg.Lease <= 0 {
		return nil, fmt.Errorf("etcd: lease %v must be positive", cfg.Lease)
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		// The client's retry warnings would flood a failover run.
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	return &Locker{cfg: cfg, ttl: TTLSeconds(cfg.Lease), client: c}, nil
}

// TTL returns the session TTL in seconds.
func (l *Locker) TTL() int64 { return l.ttl }

// Acquire implements bench.Locker: it takes an idle session of the
// Locker (or grants a new lease, bounded by ctx, and starts its
// keep-alive, which outlives ctx) and locks the mutex for key on it. A
// session serves one acquire at a time: the mutex's key is the prefix and
// the session's lease, so two acquires sharing one would both own the lock.
// When ctx ends first it returns ctx.Err() and revokes the lease, which
// removes its place in the queue.
func (l *Locker) Acquire(ctx context.Context, key string) (bench.Held, error) {
	s, err := l.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	m := concurrency.NewMutex(s, l.cfg.KeyPrefix+key)
	if err := m.Lock(ctx); err != nil {
		l.drop(s)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("etcd: lock %s: %w", key, err)
	}
	cmp := m.IsOwner()
	rev := cmp.GetCompare().GetCreateRevision()
	h := &held{l: l, s: s, m: m, rev: uint64(rev), lost: make(chan struct{}), released: make(chan struct{})}
	go h.watch()
	return h, nil
}

// session returns an idle session whose lease is alive, or a new one.
func (l *Locker) session(ctx context.Context) (*concurrency.Session, error) {
	l.mu.Lock()
	for len(l.idle) > 0 {
		s := l.idle[len(l.idle)-1]
		l.idle = l.idle[:len(l.idle)-1]
		select {
		case <-s.Done(): // its lease is gone; the keep-alive has stopped
		default:
			l.mu.Unlock()
			return s, nil
		}
	}
	l.mu.Unlock()
	grant, err := l.client.Grant(ctx, l.ttl)
	if err != nil {
		return nil, fmt.Errorf("etcd: lease grant: %w", err)
	}
	s, err := concurrency.NewSession(l.client, concurrency.WithLease(grant.ID), concurrency.WithTTL(int(l.ttl)))
	if err != nil {
		l.revoke(grant.ID)
		return nil, fmt.Errorf("etcd: session: %w", err)
	}
	return s, nil
}

// reuse puts a session whose claim ended cleanly back among the idle.
func (l *Locker) reuse(s *concurrency.Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		l.drop(s)
		return
	}
	l.idle = append(l.idle, s)
}

// drop ends a session: its lease is revoked, which deletes any key the
// session still has (a place in a queue), and its keep-alive stops.
func (l *Locker) drop(s *concurrency.Session) {
	l.revoke(s.Lease())
	s.Orphan()
}

// revokeTimeout bounds the lease revocation after a failed acquire.
const revokeTimeout = 5 * time.Second

// revoke drops a lease the caller gave up, so its key (a place in the
// queue) goes at once rather than after the TTL. A failure is ignored:
// the lease then expires by itself.
func (l *Locker) revoke(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), revokeTimeout)
	defer cancel()
	_, _ = l.client.Revoke(ctx, id)
}

// Close implements bench.Locker: it revokes the idle sessions' leases and
// closes the client (ending every session's keep-alive).
func (l *Locker) Close() error {
	l.mu.Lock()
	idle := l.idle
	l.idle, l.closed = nil, true
	l.mu.Unlock()
	// In parallel: a revocation is a quorum write, and a Locker of the
	// scale scenario closes with thousands of idle sessions.
	sem := make(chan struct{}, closeConcurrency)
	var wg sync.WaitGroup
	for _, s := range idle {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			l.drop(s)
		})
	}
	wg.Wait()
	return l.client.Close()
}

// closeConcurrency bounds the revocations in flight while a Locker closes.
const closeConcurrency = 256

type held struct {
	l   *Locker
	s   *concurrency.Session
	m   *concurrency.Mutex
	rev uint64

	lost     chan struct{} // closed by watch
	released chan struct{} // closed by Release

	once sync.Once
	err  error
}

// watch closes lost when the session ends or Release begins.
func (h *held) watch() {
	select {
	case <-h.s.Done():
	case <-h.released:
	}
	close(h.lost)
}

// Token is the lock key's creation revision.
func (h *held) Token() (uint64, bool) { return h.rev, true }

// Lost is closed when the session's Done is (the keep-alive stopped:
// failure, lease expiry) and as Release begins.
func (h *held) Lost() <-chan struct{} { return h.lost }

// Release unlocks the mutex (deletes the key) and gives the session back
// to the Locker for a later claim; when the unlock fails the session's
// lease is revoked instead. Without a quorum both wait until ctx ends.
// Only the first call acts.
func (h *held) Release(ctx context.Context) error {
	h.once.Do(func() {
		close(h.released)
		if err := h.m.Unlock(ctx); err != nil {
			h.l.drop(h.s)
			h.err = fmt.Errorf("etcd: unlock: %w", err)
			return
		}
		h.l.reuse(h.s)
	})
	return h.err
}
