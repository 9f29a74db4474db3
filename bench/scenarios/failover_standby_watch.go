package scenarios

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// watch is the failover mechanism: GET /readyz on the primary's
// operations port every interval, each check bounded by the interval,
// and the address moved after fall failures in a row (keepalived's
// vrrp_script interval and fall; a fresh connection per check, as its
// curl makes).
type watch struct {
	interval time.Duration
	fall     int
}

var (
	// keepalivedWatch is the docs' keepalived example.
	keepalivedWatch = watch{interval: time.Second, fall: 2}
	fastWatch       = watch{interval: 100 * time.Millisecond, fall: 2}
)

func (w watch) String() string {
	return fmt.Sprintf("/readyz every %v (each check bounded by it), moved after %d failures in a row", w.interval, w.fall)
}

// expected is about what detection and switch take: fall checks after
// the fault and the phase of the first.
func (w watch) expected() time.Duration { return time.Duration(w.fall+1) * w.interval }

// checkLog records when each of the watcher's checks began.
type checkLog struct {
	mu     sync.Mutex
	starts []time.Time
}

func (c *checkLog) add(at time.Time) {
	c.mu.Lock()
	c.starts = append(c.starts, at)
	c.mu.Unlock()
}

// phase is the time from the start of the last check before at to at.
func (c *checkLog) phase(at time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.starts) - 1; i >= 0; i-- {
		if !c.starts[i].After(at) {
			return at.Sub(c.starts[i]), true
		}
	}
	return 0, false
}

// run checks every interval, each check bounded by the interval, until
// ctx ends or fall checks in a row failed; then it calls move. began is
// told when each check begins.
func (w watch) run(ctx context.Context, check func(context.Context) bool, began func(time.Time), move func()) {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	fails := 0
	for {
		began(time.Now())
		cctx, cancel := context.WithTimeout(ctx, w.interval)
		ok := check(cctx)
		cancel()
		if ok {
			fails = 0
		} else if fails++; fails >= w.fall && ctx.Err() == nil {
			move()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// readyCheck is one health check of the server at opsAddr: GET /readyz
// answered 200 (on a fresh connection, as keepalived's curl makes it).
func readyCheck(opsAddr string) func(context.Context) bool {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	return func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+opsAddr+"/readyz", nil)
		if err != nil {
			return false
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}
