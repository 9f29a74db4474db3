package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/monolock/monolock-bench/bench"
)

// WatchSource says what WatchLock records, for the chaos settings.
const WatchSource = "an etcd watch on the lock's prefix (one client over all members, which resumes on another member when one fails), from a read of the prefix at the revision the watch starts after: a grant when a key becomes the lowest create revision under the prefix (the mutex's owner), with that revision as its token; an end when the owner's key is deleted (a release, or the lease's expiry: etcd does not say which), each with its revision"

// watchRetry is the pause before a broken watch is started again.
const watchRetry = 100 * time.Millisecond

// WatchLock implements bench.LockWatch for the Mutex's keys of lock key
// (DefaultKeyPrefix + key + "/<lease id>"): the cluster's one revision
// order, reported under the spec's name.
func WatchLock(ctx context.Context, servers []bench.Server, key string, report func(bench.LockChange)) {
	broken := func(err error) { report(bench.LockChange{Server: Server.Name, Kind: bench.WatchBroken, Err: err}) }
	c, err := clientv3.New(clientv3.Config{Endpoints: bench.Addrs(servers), DialTimeout: DefaultDialTimeout, Logger: zap.NewNop()})
	if err != nil {
		broken(fmt.Errorf("etcd: %w", err))
		return
	}
	defer c.Close()
	w := &ownerWatch{prefix: DefaultKeyPrefix + key + "/", report: report}
	for ctx.Err() == nil {
		err := w.watch(ctx, c)
		if ctx.Err() != nil {
			return
		}
		// Once per break: retries while no member answers add nothing.
		if w.watching {
			w.watching = false
			broken(err)
		}
		_ = bench.Sleep(ctx, watchRetry)
	}
}

// ownerWatch follows the owner of one Mutex: the live key with the lowest
// create revision.
type ownerWatch struct {
	prefix string
	report func(bench.LockChange)
	live   map[string]int64 // key → create revision
	owner  string
	// watching says WatchStarted was reported since the last break.
	watching bool
}

// watch reads the prefix, then watches it from the next revision until
// the watch breaks or ctx ends.
func (w *ownerWatch) watch(ctx context.Context, c *clientv3.Client) error {
	get, err := c.Get(ctx, w.prefix, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("etcd: reading the lock's keys: %w", err)
	}
	w.live = map[string]int64{}
	for _, kv := range get.Kvs {
		w.live[string(kv.Key)] = kv.CreateRevision
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	ch := c.Watch(wctx, w.prefix, clientv3.WithPrefix(), clientv3.WithRev(get.Header.Revision+1))
	w.report(bench.LockChange{Server: Server.Name, Kind: bench.WatchStarted, Revision: get.Header.Revision})
	w.watching = true
	w.follow(get.Header.Revision)
	for resp := range ch {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("etcd: watch: %w", err)
		}
		for _, ev := range resp.Events {
			k := string(ev.Kv.Key)
			switch ev.Type {
			case clientv3.EventTypePut:
				if ev.IsCreate() {
					w.live[k] = ev.Kv.CreateRevision
				}
			case clientv3.EventTypeDelete:
				if k == w.owner {
					w.report(bench.LockChange{Server: Server.Name, Kind: bench.LockEnded, Key: k, Token: revToken(w.live[k]), Revision: ev.Kv.ModRevision})
					w.owner = ""
				}
				delete(w.live, k)
			}
			w.follow(ev.Kv.ModRevision)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.New("etcd: watch channel closed")
}

// follow reports a grant when the lowest live create revision is a new
// owner's, at revision rev.
func (w *ownerWatch) follow(rev int64) {
	next, low := "", int64(0)
	for k, create := range w.live {
		if next == "" || create < low {
			next, low = k, create
		}
	}
	if next == "" || next == w.owner {
		return
	}
	w.owner = next
	w.report(bench.LockChange{Server: Server.Name, Kind: bench.LockGranted, Key: next, Token: revToken(low), Revision: rev})
}

func revToken(rev int64) *uint64 {
	t := uint64(rev)
	return &t
}
