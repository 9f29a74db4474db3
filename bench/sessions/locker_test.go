package sessions_test

import (
	"context"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/monolock"
)

// monolockLocker is the monolock contender with a dialer of our choice
// (bench/monolocker takes none). It is the only caller of monolock.New
// here, whose signature is changing.
type monolockLocker struct {
	client *monolock.Client
	lease  time.Duration
}

func newMonolockLocker(addr string, lease time.Duration, d monolock.Dialer) (*monolockLocker, error) {
	return &monolockLocker{client: monolock.New(monolock.Config{Address: addr, Dialer: d}), lease: lease}, nil
}

func (l *monolockLocker) Acquire(ctx context.Context, key string) (bench.Held, error) {
	lk, err := l.client.Acquire(ctx, key, l.lease)
	if err != nil {
		return nil, err
	}
	return monolockHeld{lk}, nil
}

func (l *monolockLocker) Close() error { return nil }

type monolockHeld struct{ l *monolock.Lock }

func (h monolockHeld) Token() (uint64, bool)         { return h.l.Token(), true }
func (h monolockHeld) Lost() <-chan struct{}         { return h.l.Done() }
func (h monolockHeld) Release(context.Context) error { return h.l.Release() }
