// Package zookeeper is the ZooKeeper contender: the lock recipe of
// ZooKeeper's documentation on github.com/go-zookeeper/zk, and a
// three-member ensemble of the host's Debian ZooKeeper.
//
// The lock is the recipe of ZooKeeper's "Recipes and Solutions" page
// (Curator's InterProcessMutex is the same recipe), written here on the
// client's primitives: a claim creates an ephemeral sequential node
// <root>/<key>/lock-<seq> on its session; the node with the lowest
// sequence holds the lock; a waiter sets a watch on the node just before
// its own (its predecessor) only, so a release wakes exactly one waiter
// and waiters are served in sequence order. The library's zk.Lock follows
// the same recipe but is not used: it takes no context (a waiter cannot
// stop waiting) and reports no node statistics (the fencing token). The
// node is created with the library's protected create, as Curator's
// InterProcessMutex does.
//
// A session (one client connection, zk.Conn) serves one claim at a time
// and is kept for the Locker's next claim, as etcd's contender keeps its
// sessions. Its timeout is the run's lease: the server ends a session it
// has not heard from for that long and deletes its ephemeral nodes, which
// frees a crashed or frozen holder's lock. Lost is closed when the
// session's connection is lost (Curator's SUSPENDED: the client cannot
// know whether the session will expire) or the session expires (LOST).
// As with Curator, a waiter keeps its place across a lost connection if
// the client reconnects within the session, and a delete (Release, or a
// waiter giving up) is asked again until it lands or the session ends;
// an expired session is never used again. The fencing token is the lock node's
// creation zxid (czxid): zxids order every write of the ensemble, so
// each grant's node was created after the previous holder's.
package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// ClientVersion is the client library's version (go.mod).
const ClientVersion = "github.com/go-zookeeper/zk v1.0.4"

// Defaults of Config.
const (
	DefaultRoot = "/monolock-bench"
	// DefaultRecvBuffer bounds a response the client reads (the Java
	// client's jute.maxbuffer default, 1 MiB: a lock's children list of
	// about 50,000 waiters); the library allocates a receive buffer of
	// this size per session. DefaultSendBuffer is the request buffer per
	// session (requests of this recipe are a path and an empty value).
	DefaultRecvBuffer = 1 << 20
	DefaultSendBuffer = 64 << 10
)

// Config configures a Locker.
type Config struct {
	// Servers are the members' client host:port addresses. Required.
	Servers []string
	// Lease is the run's lease: the session timeout each session asks
	// for (the server clamps it to [MinSessionTimeout, MaxSessionTimeout]).
	// Required.
	Lease time.Duration
	// Root is the parent of every lock's node; default DefaultRoot. A
	// lock's waiters are the children of <Root>/<key, path-escaped>.
	Root string
	// Dialer, when set, makes every connection; default net.Dialer.
	Dialer bench.Dialer
}

func (c Config) withDefaults() Config {
	if c.Root == "" {
		c.Root = DefaultRoot
	}
	return c
}

// Settings describes the configuration for results.json.
func (c Config) Settings() results.Settings {
	c = c.withDefaults()
	return results.Settings{
		"client":          ClientVersion + ", the lock recipe written on its primitives (Create, Children, ExistsW, Delete); zk.Lock not used: it takes no context and reports no czxid",
		"recipe":          "ZooKeeper's documented lock recipe (Curator's InterProcessMutex): ephemeral sequential node under <root>/<key>; the lowest sequence holds; a waiter watches only its predecessor (ExistsW)",
		"claim":           "a session per concurrent claim (an idle one of the Locker, else a new connection and session); protected Create ephemeral-sequential (CreateProtectedEphemeralSequential, as Curator's withProtection), then Children (+ Exists of its own node, pipelined, for the czxid); waiters ExistsW their predecessor and keep their place across a reconnect within the session",
		"session_timeout": "the lease, asked by the client and clamped by the servers to [minSessionTimeout, maxSessionTimeout] (setting server_settings); the negotiated one is recorded per run",
		"token":           "czxid of the lock node, its creation's zxid, strictly increasing across grants",
		"lost":            "the session's connection was lost (Curator's SUSPENDED: no answer for 2/3 of the session timeout, or a closed socket) or the session expired (LOST)",
		"release":         "Delete of the node, asked again in the background while the connection is lost (Curator's guaranteed delete) until it lands, the session expires or 2 × lease + 10s pass; the session is kept for the Locker's next claim unless it expired",
		"wait":            "server-side order by sequence number; one watch on the predecessor (no herd, no polling)",
		"give_up":         "never (waits until the harness cancels; a claim whose session expired is made again on a new session)",
		"lock_parents":    "container nodes (deleted by the server once empty, as Curator creates them); recreated when gone",
		"root":            c.Root,
		"servers":         strconv.Itoa(len(c.Servers)) + " members, every session given all (the client picks one at random, then the next on a lost connection)",
		"client_buffers":  fmt.Sprintf("receive %d KiB (largest response), send %d KiB per session", DefaultRecvBuffer>>10, DefaultSendBuffer>>10),
	}
}

// Locker is a ZooKeeper lock contender. It is safe for concurrent use.
type Locker struct {
	cfg Config

	mu      sync.Mutex
	idle    []*session // sessions no claim uses
	all     map[*session]bool
	closed  bool
	parents map[string]bool // lock directories known to exist

	bg sync.WaitGroup // drops and releases finishing after their caller returned
}

// New returns a Locker for the ensemble at cfg.Servers; it connects
// nothing until the first Acquire.
func New(cfg Config) (*Locker, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Servers) == 0 {
		return nil, errors.New("zookeeper: no servers")
	}
	if cfg.Lease <= 0 {
		return nil, fmt.Errorf("zookeeper: lease %v must be positive", cfg.Lease)
	}
	return &Locker{cfg: cfg, all: map[*session]bool{}, parents: map[string]bool{}}, nil
}

// session is one client connection and its ZooKeeper session.
type session struct {
	conn *zk.Conn
	// up is closed once the session is first established.
	up     chan struct{}
	upOnce sync.Once
	// timeout is the negotiated session timeout in milliseconds.
	timeout atomic.Int32

	mu sync.Mutex
	// down is closed when the connection is lost or the session expires
	// (Curator's SUSPENDED, LOST); a fresh one is made when the session
	// is back (RECONNECTED). A grant is lost once the down of its time
	// closes.
	down chan struct{}
	// expired is set when the server ended the session: its nodes are
	// gone, and the client would go on with a new session, which is
	// never used.
	expired bool
}

// downCh returns the channel closed at the session's next loss.
func (s *session) downCh() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

// isExpired reports whether the server ended the session.
func (s *session) isExpired() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.expired
}

// event follows the connection's states (zk.WithEventCallback: must not
// block).
func (s *session) event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev.State {
	case zk.StateHasSession:
		s.upOnce.Do(func() { close(s.up) })
		if closed(s.down) && !s.expired {
			s.down = make(chan struct{})
		}
	case zk.StateDisconnected, zk.StateExpired, zk.StateAuthFailed:
		select {
		case <-s.up:
		default:
			return // not yet established: the client tries the next member
		}
		if !closed(s.down) {
			close(s.down)
		}
		if ev.State != zk.StateDisconnected {
			s.expired = true
		}
	}
}

// closed reports whether c is closed.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// sessionLogger reads the negotiated session timeout from the client's
// "authenticated" log line (the library exposes it nowhere else) and
// drops every other line (reconnects would flood a failover run).
type sessionLogger struct{ s *session }

func (l sessionLogger) Printf(format string, args ...any) {
	if strings.HasPrefix(format, "authenticated: ") && len(args) == 2 {
		if ms, ok := args[1].(int32); ok {
			l.s.timeout.Store(ms)
		}
	}
}

// connect opens a new session and waits until it is established or ctx
// ends.
func (l *Locker) connect(ctx context.Context) (*session, error) {
	s := &session{up: make(chan struct{}), down: make(chan struct{})}
	dial := zk.Dialer(net.DialTimeout) // the library's default
	if d := l.cfg.Dialer; d != nil {
		dial = func(network, addr string, timeout time.Duration) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			return d.DialContext(ctx, network, addr)
		}
	}
	conn, _, err := zk.Connect(l.cfg.Servers, l.cfg.Lease,
		zk.WithDialer(dial),
		zk.WithEventCallback(s.event),
		zk.WithLogger(sessionLogger{s}),
		zk.WithMaxBufferSize(DefaultRecvBuffer),
		zk.WithMaxConnBufferSize(DefaultSendBuffer),
	)
	if err != nil {
		return nil, fmt.Errorf("zookeeper: connect: %w", err)
	}
	s.conn = conn
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		conn.Close()
		return nil, errClosed
	}
	l.all[s] = true
	l.mu.Unlock()
	select {
	case <-s.up:
		return s, nil
	case <-ctx.Done():
		l.dropLater(s)
		return nil, ctx.Err()
	}
}

// session returns an idle session that has not expired, or a new one.
func (l *Locker) session(ctx context.Context) (*session, error) {
	l.mu.Lock()
	for len(l.idle) > 0 {
		s := l.idle[len(l.idle)-1]
		l.idle = l.idle[:len(l.idle)-1]
		if !s.isExpired() {
			l.mu.Unlock()
			return s, nil
		}
		l.dropLater(s)
	}
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	return l.connect(ctx)
}

// reuse gives a session whose claim ended cleanly back to the idle list.
func (l *Locker) reuse(s *session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || s.isExpired() {
		l.dropLater(s)
		return
	}
	l.idle = append(l.idle, s)
}

// dropLater closes a session in the background (Close waits up to a few
// seconds for the server's answer); Close waits for it. Closing ends the
// session at once when the client is connected (its nodes go with it),
// else the server expires it after its timeout.
func (l *Locker) dropLater(s *session) {
	l.bg.Go(func() { l.drop(s) })
}

// drop closes a session now.
func (l *Locker) drop(s *session) {
	l.mu.Lock()
	delete(l.all, s)
	l.mu.Unlock()
	s.conn.Close()
}

// errClosed is returned by Acquire after Close.
var errClosed = errors.New("zookeeper: Locker closed")

// isClosed reports whether Close was called.
func (l *Locker) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Timeout returns the session timeout the servers granted the session,
// as the client learned it (0 before the session is established).
func (s *session) Timeout() time.Duration {
	return time.Duration(s.timeout.Load()) * time.Millisecond
}

// Acquire implements bench.Locker: the recipe on an idle session of the
// Locker, or a new one. When ctx ends first it returns ctx.Err() and
// deletes its node in the background. A waiter whose connection is lost
// keeps its place and waits on once the client has reconnected within
// the session (its node and watch survive), as Curator's waiters do;
// when the session expires, its node is gone and the claim is made again
// on a new session.
func (l *Locker) Acquire(ctx context.Context, key string) (bench.Held, error) {
	dir := l.cfg.Root + "/" + url.PathEscape(key)
	for {
		s, err := l.session(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		h, err := l.lock(ctx, s, dir)
		switch {
		case err == nil:
			return h, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, errClosed):
			l.dropLater(s)
			return nil, err
		case errors.Is(err, errExpired), connectionLost(err):
			// The session ended, or the create could not learn its node:
			// claim again on a new session (the old one's nodes go with
			// it).
			l.dropLater(s)
			continue
		}
		l.dropLater(s)
		return nil, fmt.Errorf("zookeeper: lock %s: %w", key, err)
	}
}

// errExpired is returned by lock when the session expired while the
// claim waited.
var errExpired = errors.New("zookeeper: session expired while waiting")

// reconnectPause is how long a claim waits before it asks again after a
// request failed for a lost connection.
const reconnectPause = 100 * time.Millisecond

// connectionLost reports whether err is a request's failure for a lost
// connection, which a request after the client reconnects may not have.
func connectionLost(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) || errors.Is(err, zk.ErrSessionMoved)
}

// lock runs the recipe on s for the lock directory dir.
func (l *Locker) lock(ctx context.Context, s *session, dir string) (*held, error) {
	node, err := l.create(s, dir)
	if err != nil {
		return nil, err
	}
	name := node[len(dir)+1:]
	seq, err := sequence(name)
	if err != nil {
		return nil, err
	}
	// The node's czxid, read while the recipe lists the children: the
	// client pipelines both requests on the session's connection.
	stat := make(chan *zk.Stat, 1)
	l.bg.Go(func() {
		_, st, err := s.conn.Exists(node)
		if err != nil {
			st = nil
		}
		stat <- st
	})
	abandon := func() {
		// Give the place up in the background: the caller returns now.
		l.bg.Go(func() { l.remove(s, node, nil) })
	}
	// retry says whether a failed request is asked again (a lost
	// connection, within the session), else the error to return.
	retry := func(err error) (bool, error) {
		switch {
		case s.isExpired():
			abandon()
			return false, errExpired
		case l.isClosed():
			abandon()
			return false, errClosed
		case connectionLost(err):
			if err := bench.Sleep(ctx, reconnectPause); err != nil {
				abandon()
				return false, err
			}
			return true, nil
		}
		abandon()
		return false, err
	}
	czxid := int64(-1)
	for {
		down := s.downCh()
		children, _, err := s.conn.Children(dir)
		if err != nil {
			if again, err := retry(err); !again {
				return nil, fmt.Errorf("children: %w", err)
			}
			continue
		}
		pred, first := predecessor(children, seq)
		if first {
			if czxid < 0 {
				if st := <-stat; st != nil {
					czxid = st.Czxid
				}
			}
			for czxid < 0 { // the pipelined Exists failed
				_, st, err := s.conn.Exists(node)
				if err == nil {
					czxid = st.Czxid
					break
				}
				if again, err := retry(err); !again {
					return nil, fmt.Errorf("exists of its own node: %w", err)
				}
			}
			if closed(down) {
				continue // lost the connection meanwhile: ask again
			}
			h := &held{l: l, s: s, node: node, czxid: uint64(czxid), down: down, lost: make(chan struct{}), released: make(chan struct{})}
			go h.watch()
			return h, nil
		}
		ok, _, ch, err := s.conn.ExistsW(dir + "/" + pred)
		if err != nil {
			if again, err := retry(err); !again {
				return nil, fmt.Errorf("exists %s: %w", pred, err)
			}
			continue
		}
		if !ok {
			continue // the predecessor went between the two calls
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				if again, err := retry(ev.Err); !again {
					return nil, fmt.Errorf("watch: %w", err)
				}
			}
		case <-down:
			// The connection is lost: the claim keeps its place if the
			// session lives on; its next request waits for the client to
			// reconnect.
			if s.isExpired() {
				abandon()
				return nil, errExpired
			}
		case <-ctx.Done():
			abandon()
			return nil, ctx.Err()
		}
	}
}

// removeFor bounds remove's tries: the session ends at most a timeout
// after the client last reached a member, and an ensemble restarting
// takes seconds. Close ends them at once.
func removeFor(lease time.Duration) time.Duration { return 2*lease + 10*time.Second }

// remove deletes node, asking again while the connection is lost (the
// session and the node may live on: Curator's guaranteed delete), until
// it is gone, the session expired or removeFor passed; then it gives the
// session back for another claim, or closes it. first, when set, is
// told the first try's error as soon as it is known.
func (l *Locker) remove(s *session, node string, first func(error)) {
	deadline := time.Now().Add(removeFor(l.cfg.Lease))
	for try := 0; ; try++ {
		err := s.conn.Delete(node, -1)
		if errors.Is(err, zk.ErrNoNode) {
			err = nil // it went with an earlier try, or with the session
		}
		if err == nil {
			// Back among the idle before the caller learns of the
			// release: a worker that claims again at once takes it
			// rather than opening a new session (whose connect would
			// delay its request behind later ones).
			l.reuse(s)
		}
		if try == 0 && first != nil {
			first(err)
		}
		switch {
		case err == nil:
			return
		case s.isExpired() || l.isClosed() || !connectionLost(err) || time.Now().After(deadline):
			l.drop(s)
			return
		}
		time.Sleep(reconnectPause)
	}
}

// create makes the claim's ephemeral sequential node under dir with the
// library's protected create (Curator's withProtection: the name carries
// a random id, so that after a connection lost during the create the
// client finds the node the server may have made), creating
// dir (a container node) and the root when missing; the server may delete
// an empty container between the two creates, so it tries a few times.
func (l *Locker) create(s *session, dir string) (string, error) {
	acl := zk.WorldACL(zk.PermAll)
	var err error
	for range 5 {
		var node string
		node, err = s.conn.CreateProtectedEphemeralSequential(dir+"/lock-", nil, acl)
		if err == nil {
			l.mu.Lock()
			l.parents[dir] = true
			l.mu.Unlock()
			return node, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return "", fmt.Errorf("create: %w", err)
		}
		for _, p := range []string{l.cfg.Root, dir} {
			flags := int32(zk.FlagPersistent)
			if p == dir {
				flags = zk.FlagContainer
				if _, err := s.conn.CreateContainer(p, nil, flags, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
					return "", fmt.Errorf("create %s: %w", p, err)
				}
				continue
			}
			if _, err := s.conn.Create(p, nil, flags, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return "", fmt.Errorf("create %s: %w", p, err)
			}
		}
	}
	return "", fmt.Errorf("create: %w", err)
}

// sequence parses the sequence number ZooKeeper appended to a node's
// name (10 digits).
func sequence(name string) (int64, error) {
	i := strings.LastIndex(name, "-")
	n, err := strconv.ParseInt(name[i+1:], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("zookeeper: node %q has no sequence number", name)
	}
	return n, nil
}

// predecessor returns the child whose sequence number is the largest
// below seq, or first when there is none (seq is the lowest: the lock is
// held). Children without a sequence number are ignored.
func predecessor(children []string, seq int64) (pred string, first bool) {
	best := int64(-1)
	for _, c := range children {
		n, err := sequence(c)
		if err != nil || n >= seq {
			continue
		}
		if n > best {
			best, pred = n, c
		}
	}
	return pred, best < 0
}

// Close implements bench.Locker: it closes every session of the Locker
// (a delete still being asked again is given up: the session's end
// removes its nodes) and waits for the background work to end.
func (l *Locker) Close() error {
	l.mu.Lock()
	l.idle, l.closed = nil, true
	for s := range l.all {
		l.dropLater(s)
	}
	l.mu.Unlock()
	l.bg.Wait()
	return nil
}

type held struct {
	l     *Locker
	s     *session
	node  string
	czxid uint64
	down  <-chan struct{} // the session's down at the grant

	lost     chan struct{} // closed by watch
	released chan struct{} // closed by Release

	once sync.Once
	err  error
}

// watch closes lost when the session goes down or Release begins.
func (h *held) watch() {
	select {
	case <-h.down:
	case <-h.released:
	}
	close(h.lost)
}

// Token is the lock node's czxid.
func (h *held) Token() (uint64, bool) { return h.czxid, true }

// Lost is closed when the session's connection is lost or the session
// expires, and as Release begins.
func (h *held) Lost() <-chan struct{} { return h.lost }

// Release deletes the node and gives the session back for a later claim
// (or closes it, if it expired). When the first delete fails for a lost
// connection, it returns that error and asks again in the background
// until the node is gone or the session ends; when ctx ends before the
// first delete is answered, it returns ctx.Err(). Only the first call
// acts.
func (h *held) Release(ctx context.Context) error {
	h.once.Do(func() {
		close(h.released)
		done := make(chan error, 1)
		h.l.bg.Go(func() { h.l.remove(h.s, h.node, func(err error) { done <- err }) })
		select {
		case err := <-done:
			if err != nil {
				h.err = fmt.Errorf("zookeeper: delete %s: %w", h.node, err)
			}
		case <-ctx.Done():
			h.err = ctx.Err()
		}
	})
	return h.err
}
