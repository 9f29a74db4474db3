package redisbench

import (
	"context"
	"sync"
	"time"
)

// Watchdog keeps a held Redis lock alive, as Redisson does: it extends the
// lock every ttl/3 until stopped. The lock counts as lost when an extension
// is refused, or when GiveUpFactor × ttl passed since the start of the last
// confirmed extension (monolock's client rule, 0.8 × lease) — a timer, so
// silence is noticed at that moment and not at the next tick. Either closes
// Lost and ends the watchdog. Its methods are safe for concurrent use.
type Watchdog struct {
	lost     chan struct{}
	lostOnce sync.Once
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// ExtendFunc extends the lock within ctx: confirmed when the server(s)
// extended it, refused (confirmed false, err nil) when the lock is no
// longer ours, an error when the answer did not come.
type ExtendFunc func(ctx context.Context) (confirmed bool, err error)

// StartWatchdog starts the watchdog of a lock granted by a request sent at
// granted (the TTL runs from no earlier than that).
func StartWatchdog(ttl time.Duration, granted time.Time, extend ExtendFunc) *Watchdog {
	w := &Watchdog{lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run(ttl, granted, extend)
	return w
}

func (w *Watchdog) run(ttl time.Duration, confirmed time.Time, extend ExtendFunc) {
	defer close(w.done)
	giveUp := time.Duration(GiveUpFactor * float64(ttl))
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	expire := time.NewTimer(time.Until(confirmed.Add(giveUp)))
	defer expire.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-expire.C:
			w.MarkLost()
			return
		case <-tick.C:
		}
		start := time.Now()
		// No call outlives the give-up moment.
		deadline := start.Add(ttl / 3)
		if end := confirmed.Add(giveUp); end.Before(deadline) {
			deadline = end
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		ok, err := extend(ctx)
		cancel()
		switch {
		case ok:
			confirmed = start
			expire.Reset(time.Until(confirmed.Add(giveUp)))
		case err == nil: // refused
			w.MarkLost()
			return
		}
		if time.Since(confirmed) >= giveUp {
			w.MarkLost()
			return
		}
	}
}

// Lost is closed when the lock is lost and after Release.
func (w *Watchdog) Lost() <-chan struct{} { return w.lost }

// MarkLost closes Lost (once); a Release calls it when it is done.
func (w *Watchdog) MarkLost() { w.lostOnce.Do(func() { close(w.lost) }) }

// Halt stops the watchdog and waits until no extension is in flight, so a
// release never races with an extension.
func (w *Watchdog) Halt() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}
