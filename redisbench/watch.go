package redisbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
)

// WatchSource says what the LockWatch of the Redis family records, for
// the chaos settings.
const WatchSource = "a subscriber per master to the keyspace notifications of the lock's key (notify-keyspace-events K$hgxe, set by CONFIG SET on every connect, since a restarted server forgets it), in the server's order: a grant when a write (set, hset, hincrby) creates the key, a renewal when one extends it (expire, or a write while it exists), an end on del or expired (the cause kept); after a grant or renewal the key's PTTL is read back on a second connection"

// keyspaceEvents are the notifications a watcher needs: keyspace channel
// (K) for strings ($), hashes (h), generic commands (g: del, expire),
// expiries (x) and evictions (e).
const keyspaceEvents = "K$hgxe"

// watchRetry is the pause before a broken watch is started again.
const watchRetry = 100 * time.Millisecond

// LockWatch returns a bench.LockWatch of the keys prefix + key: one
// watcher per server (a Redlock master each), reported under the
// server's name.
func LockWatch(prefix string) bench.LockWatch {
	return func(ctx context.Context, servers []bench.Server, key string, report func(bench.LockChange)) {
		var wg sync.WaitGroup
		for _, s := range servers {
			wg.Go(func() {
				w := &keyWatch{server: s.Name(), addr: s.Addr(), key: prefix + key, report: report}
				for ctx.Err() == nil {
					err := w.watch(ctx)
					if ctx.Err() != nil {
						return
					}
					// Once per break: retries against a server that is down
					// add nothing.
					if w.watching {
						w.watching = false
						report(bench.LockChange{Server: w.server, Kind: bench.WatchBroken, Err: err})
					}
					_ = bench.Sleep(ctx, watchRetry)
				}
			})
		}
		wg.Wait()
	}
}

// keyWatch follows one key on one server.
type keyWatch struct {
	server, addr, key string
	report            func(bench.LockChange)
	watching          bool // WatchStarted was reported since the last break
}

// watch subscribes to the key's notifications and reports them until the
// connection breaks or ctx ends.
func (w *keyWatch) watch(ctx context.Context) error {
	// The client's timeouts bound the commands; a subscriber's receive
	// waits without one.
	c := redis.NewClient(ClientOptions(w.addr, 2, Timeouts{}, nil))
	defer c.Close()
	if err := c.ConfigSet(ctx, "notify-keyspace-events", keyspaceEvents).Err(); err != nil {
		return fmt.Errorf("redisbench: CONFIG SET notify-keyspace-events: %w", err)
	}
	sub := c.Subscribe(ctx, "__keyspace@0__:"+w.key)
	defer sub.Close()
	// A receive does not end with ctx (only at its deadline): closing the
	// subscription ends it.
	defer context.AfterFunc(ctx, func() { sub.Close() })()
	if _, err := sub.Receive(ctx); err != nil {
		return fmt.Errorf("redisbench: subscribing: %w", err)
	}
	// Read after the subscription: a change from here on is notified.
	held, err := c.Exists(ctx, w.key).Result()
	if err != nil {
		return fmt.Errorf("redisbench: EXISTS: %w", err)
	}
	w.report(bench.LockChange{Server: w.server, Kind: bench.WatchStarted})
	w.watching = true
	present := held == 1
	for {
		msg, err := sub.ReceiveMessage(ctx)
		if err != nil {
			return fmt.Errorf("redisbench: keyspace notifications: %w", err)
		}
		change := bench.LockChange{Server: w.server, Key: w.key}
		switch msg.Payload {
		case "set", "hset", "hincrby":
			change.Kind = bench.LockRenewed
			if !present {
				change.Kind = bench.LockGranted
			}
			present = true
		case "expire":
			if !present {
				continue
			}
			change.Kind = bench.LockRenewed
		case "del", "expired", "evicted":
			change.Kind, change.Cause = bench.LockEnded, msg.Payload
			present = false
		default:
			continue
		}
		if change.Kind != bench.LockEnded {
			change.TTL = w.ttl(ctx, c)
		}
		w.report(change)
	}
}

// ttl reads the key's remaining TTL; nil when it has none or the read
// failed (the record then makes no claim about its lease).
func (w *keyWatch) ttl(ctx context.Context, c *redis.Client) *time.Duration {
	d, err := c.PTTL(ctx, w.key).Result()
	if err != nil && !errors.Is(err, redis.Nil) || d < 0 {
		return nil
	}
	return &d
}
