// Package monolock is the monolock contender: this project's Go client
// (package monolock) on the bench seam, and the server it needs. Acquire is
// the client's Acquire (one connection per claim, FIFO queue on the
// server, promotion pushed), Lost is Lock.Done and Release closes the
// connection.
package monolock

import (
	"context"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/monolock"
)

// Contender returns the monolock row of the contender table.
func Contender() bench.Contender {
	return bench.Contender{
		Name: "monolock", Label: "monolock", Family: "monolock", Colour: "#1f5fbf",
		Server:          Server,
		WatchLock:       WatchLock,
		WatchLockSource: WatchSource,
		Settings:        Settings(),
		New: func(_ context.Context, addrs []string, lease time.Duration, o bench.OpenOptions) (bench.Locker, error) {
			// A nil o.Dialer stays nil: the client's own dialer.
			return New(monolock.Config{Address: addrs[0], Dialer: o.Dialer}, lease), nil
		},
		Dials:    true,
		Counters: NewCounters,
		Claims:   kinds(append(append(Claims(), scaleClaims()...), coldInRoundTrips())),
		Notes:    Notes(),
	}
}

// Settings describes the contender for results.json.
func Settings() results.Settings {
	return results.Settings{
		"client":    "monolock Go client (this repository), Client.Acquire",
		"claim":     "one TCP connection per claim, plaintext",
		"heartbeat": "lease/4 minus 2×EWMA(RTT), floor 100ms; lost after 0.8×lease without confirmation",
		"wait":      "server-side FIFO queue, promotion pushed (no polling)",
		"release":   "close the connection with a reset (SO_LINGER 0, no TIME_WAIT on the client)",
		"give_up":   "never (waits until the harness cancels)",
		"counters":  countersSource,
	}
}

// Locker is a monolock contender. It is safe for concurrent use.
type Locker struct {
	client *monolock.Client
	lease  time.Duration
}

// New returns a Locker on a client of cfg (a dialer spreading
// connections over addresses, warm spares, TCP Fast Open) acquiring with
// lease.
func New(cfg monolock.Config, lease time.Duration) *Locker {
	return &Locker{client: monolock.New(cfg), lease: lease}
}

// Acquire implements bench.Locker.
func (l *Locker) Acquire(ctx context.Context, key string) (bench.Held, error) {
	lk, err := l.client.Acquire(ctx, key, l.lease)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return held{lk}, nil
}

// Close implements bench.Locker: it closes the client's spare
// connections, if it has any.
func (l *Locker) Close() error { return l.client.Close() }

type held struct{ l *monolock.Lock }

func (h held) Token() (uint64, bool)         { return h.l.Token(), true }
func (h held) Lost() <-chan struct{}         { return h.l.Done() }
func (h held) Release(context.Context) error { return h.l.Release() }
