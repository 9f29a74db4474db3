package redisbench

import (
	"sync"
	"time"
)

// watchdog keeps a held Redis lock alive, as Redisson does: it calls extend
// every ttl/3 until stopped. extend reports whether the lock is lost, which
// closes Lost and ends the watchdog.
type watchdog struct {
	lost     chan struct{}
	lostOnce sync.Once
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func startWatchdog(ttl time.Duration, extend func() (lost bool)) *watchdog {
	w := &watchdog{lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run(ttl/3, extend)
	return w
}

func (w *watchdog) run(interval time.Duration, extend func() (lost bool)) {
	defer close(w.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		if extend() {
			w.markLost()
			return
		}
	}
}

// Lost is closed when an extension failed and after Release.
func (w *watchdog) Lost() <-chan struct{} { return w.lost }

func (w *watchdog) markLost() { w.lostOnce.Do(func() { close(w.lost) }) }

// halt stops the watchdog and waits until no extension is in flight, so a
// release never races with an extension.
func (w *watchdog) halt() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}
