package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/monolock/monolock-bench/bench"
)

// WatchSource says what WatchLock records, for the chaos settings.
const WatchSource = "a children watch on the lock's node (one session over all members): a grant when a node becomes the lowest sequence, with its czxid as the token; an end when that node is gone (a release, or its session's expiry: ZooKeeper does not say which), each with the parent's pzxid as its revision; a watch fires once, so an owner that came and went between two listings is missed (its overlaps stay unclassified)"

// watchRetry is the pause before a broken watch is started again.
const watchRetry = 100 * time.Millisecond

// WatchLock implements bench.LockWatch for the recipe's nodes of lock key
// (DefaultRoot/<key, path-escaped>/<sequential>), reported under the
// spec's name.
func WatchLock(ctx context.Context, servers []bench.Server, key string, report func(bench.LockChange)) {
	conn, _, err := zk.Connect(bench.Addrs(servers), 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		report(bench.LockChange{Server: Server.Name, Kind: bench.WatchBroken, Err: fmt.Errorf("zookeeper: connect: %w", err)})
		return
	}
	defer conn.Close()
	w := &ownerWatch{dir: DefaultRoot + "/" + url.PathEscape(key), report: report}
	for ctx.Err() == nil {
		err := w.watch(ctx, conn)
		if ctx.Err() != nil {
			return
		}
		// Once per break: retries while no member answers add nothing.
		if w.watching {
			w.watching = false
			report(bench.LockChange{Server: Server.Name, Kind: bench.WatchBroken, Err: err})
		}
		_ = bench.Sleep(ctx, watchRetry)
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// ownerWatch follows the owner of one lock: the child with the lowest
// sequence number.
type ownerWatch struct {
	dir    string
	report func(bench.LockChange)
	owner  string // path of the owner's node, "" when none
	czxid  int64  // the owner's
	// watching says WatchStarted was reported since the last break.
	watching bool
}

// watch lists the children, reporting a change of owner, and waits for
// them to change, until the watch breaks or ctx ends.
func (w *ownerWatch) watch(ctx context.Context, conn *zk.Conn) error {
	for {
		children, stat, ch, err := conn.ChildrenW(w.dir)
		if errors.Is(err, zk.ErrNoNode) {
			// No claim yet made the lock's node: wait for it.
			_, _, ch, err = conn.ExistsW(w.dir)
			stat = &zk.Stat{}
		}
		if err != nil {
			return fmt.Errorf("zookeeper: watching %s: %w", w.dir, err)
		}
		if !w.watching {
			w.report(bench.LockChange{Server: Server.Name, Kind: bench.WatchStarted, Revision: stat.Pzxid})
			w.watching = true
		}
		if err := w.follow(conn, children, stat.Pzxid); err != nil {
			return err
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return fmt.Errorf("zookeeper: watch: %w", ev.Err)
			}
			if ev.Type == zk.EventNotWatching {
				return errors.New("zookeeper: watch dropped (session expired)")
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// follow reports the end of the owner that is gone and the grant of the
// new lowest child, at revision rev (the parent's pzxid).
func (w *ownerWatch) follow(conn *zk.Conn, children []string, rev int64) error {
	next, low := "", int64(-1)
	for _, c := range children {
		seq, err := sequence(c)
		if err != nil {
			continue
		}
		if low < 0 || seq < low {
			next, low = w.dir+"/"+c, seq
		}
	}
	if next == w.owner {
		return nil
	}
	if w.owner != "" {
		w.report(bench.LockChange{Server: Server.Name, Kind: bench.LockEnded, Key: w.owner, Token: zxidToken(w.czxid), Revision: rev})
		w.owner = ""
	}
	if next == "" {
		return nil
	}
	ok, st, err := conn.Exists(next)
	if err != nil {
		return fmt.Errorf("zookeeper: reading %s: %w", next, err)
	}
	if !ok {
		return nil // gone already: its hold is missed, the next listing follows
	}
	w.owner, w.czxid = next, st.Czxid
	w.report(bench.LockChange{Server: Server.Name, Kind: bench.LockGranted, Key: next, Token: zxidToken(st.Czxid), Revision: rev})
	return nil
}

func zxidToken(zxid int64) *uint64 {
	t := uint64(zxid)
	return &t
}
