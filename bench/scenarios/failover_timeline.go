package scenarios

// The steady load of the failover scenario: its workers, the timeline of
// their grants and failed attempts, and the figures read from it.

import (
	"context"
	"errors"
	"io"
	mrand "math/rand/v2"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/aclements/go-moremath/stats"
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
)

// grantEvent is one grant of the steady load.
type grantEvent struct {
	began   time.Time // the acquisition's first attempt
	attempt time.Time // the attempt that succeeded
	at      time.Time // Acquire returned the grant
	token   uint64
	tokenOK bool
	lostAt  time.Time // Lost closed before the release; zero if not
	// released and releaseTook: when the release began and how long it
	// took (a release to a dead server can cost more than the grant).
	released    time.Time
	releaseTook time.Duration
}

// failEvent is one failed Acquire attempt.
type failEvent struct {
	at   time.Time
	kind string
}

// timeline collects the events of every worker. It is safe for concurrent
// use: at a few hundred grants a second a mutex costs nothing.
type timeline struct {
	mu     sync.Mutex
	grants []grantEvent
	fails  []failEvent
	counts map[string]int64
	errs   []string
}

func (t *timeline) grant(g grantEvent) {
	t.mu.Lock()
	t.grants = append(t.grants, g)
	t.mu.Unlock()
}

func (t *timeline) fail(at time.Time, kind string, err error) {
	t.mu.Lock()
	t.fails = append(t.fails, failEvent{at, kind})
	t.counts["failed_"+kind]++
	t.errs = load.NoteError(t.errs, err.Error())
	t.mu.Unlock()
}

func (t *timeline) count(name string) {
	t.mu.Lock()
	t.counts[name]++
	t.mu.Unlock()
}

// errorKind sorts a failed attempt: timeout, refused, reset, unreachable,
// gave_up or other.
func errorKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, bench.ErrGaveUp):
		return "gave_up"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return "reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "unreachable"
	}
	return "other"
}

// steadyWorker acquires key, holds it for hold and releases it until ctx
// ends, retrying failed attempts with backoff.
func steadyWorker(ctx context.Context, l bench.Locker, key string, hold, lease time.Duration, tl *timeline) {
	for ctx.Err() == nil {
		g := grantEvent{began: time.Now()}
		delay := retryMin
		var h bench.Held
		for {
			g.attempt = time.Now()
			actx, cancel := context.WithTimeout(ctx, lease)
			var err error
			h, err = l.Acquire(actx, key)
			cancel()
			if ctx.Err() != nil {
				if h != nil {
					_ = h.Release(context.WithoutCancel(ctx))
				}
				return
			}
			if err == nil {
				break
			}
			tl.fail(time.Now(), errorKind(err), err)
			if bench.Sleep(ctx, delay/2+mrand.N(delay/2+1)) != nil {
				return
			}
			delay = min(2*delay, retryMax)
		}
		g.at = time.Now()
		g.token, g.tokenOK = h.Token()
		t := time.NewTimer(hold)
		select {
		case <-t.C:
		case <-h.Lost():
		case <-ctx.Done():
		}
		t.Stop()
		select {
		case <-h.Lost():
			g.lostAt = time.Now()
		default:
		}
		// A release to a dead server must not hold the worker either.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lease)
		g.released = time.Now()
		if err := h.Release(rctx); err != nil && g.lostAt.IsZero() {
			tl.count("release_errors")
		}
		g.releaseTook = time.Since(g.released)
		cancel()
		tl.grant(g)
	}
}

// failoverRaw reads the figures of a steady-load variant from its
// timeline.
func failoverRaw(tl *timeline, ft faultTimes) results.Raw {
	grants := slices.SortedFunc(slices.Values(tl.grants), func(a, b grantEvent) int { return a.at.Compare(b.at) })
	// The fault window: until the restart began, or to the end of the load
	// when the servers stay down.
	windowEnd := ft.restart
	if windowEnd.IsZero() {
		windowEnd = ft.end
	}
	fo := results.FailoverMetrics
	raw := results.Raw{
		Seconds: ft.end.Sub(ft.start).Seconds(),
		Counts:  tl.counts,
		Errors:  tl.errs,
	}
	metric := func(m results.MetricSpec, v float64) {
		raw.Metrics = append(raw.Metrics, m.Of(v))
	}

	// The unavailability window: the longest stretch without a grant from
	// the last grant before the fault on; the end of the load closes a
	// stretch that never ended.
	var last time.Time
	var before, during, after int
	var maxBefore, minAfter uint64
	var tokBefore, tokAfter bool
	var whileDown int
	var firstAfterRestart time.Time
	var faultAcquires, faultReleases []float64
	var lost int
	var lostAfter time.Duration
	for _, g := range grants {
		switch {
		case g.at.Before(ft.fault):
			before++
			last = g.at
			if g.tokenOK {
				maxBefore, tokBefore = max(maxBefore, g.token), true
			}
		case g.at.Before(windowEnd):
			during++
		default:
			after++
		}
		if !ft.restart.IsZero() && !g.at.Before(ft.restart) {
			if firstAfterRestart.IsZero() {
				firstAfterRestart = g.at
			}
			if g.tokenOK {
				if !tokAfter || g.token < minAfter {
					minAfter = g.token
				}
				tokAfter = true
			}
		}
		if !g.attempt.Before(ft.faultDone) && g.at.Before(windowEnd) {
			whileDown++
		}
		// Acquisitions and releases in flight during the fault window.
		if !g.at.Before(ft.fault) && g.began.Before(windowEnd) {
			faultAcquires = append(faultAcquires, us(int64(g.at.Sub(g.began))))
		}
		if !g.released.Add(g.releaseTook).Before(ft.fault) && g.released.Before(windowEnd) {
			faultReleases = append(faultReleases, ms(g.releaseTook))
		}
		if !g.lostAt.IsZero() && !g.lostAt.Before(ft.fault) {
			lost++
			lostAfter = max(lostAfter, g.lostAt.Sub(ft.fault))
		}
	}
	gap := time.Duration(0)
	prev := last
	if prev.IsZero() {
		prev = ft.start
	}
	for _, g := range grants {
		if g.at.After(prev) && !g.at.Before(ft.fault) {
			gap = max(gap, g.at.Sub(prev))
			prev = g.at
		}
	}
	gap = max(gap, ft.end.Sub(prev))
	metric(fo.UnavailableMs, ms(gap))

	// Whole buckets only: a last, partial one would read as a drop.
	buckets := int(ft.end.Sub(ft.start) / bucket)
	grantSeries, failSeries := make([]float64, buckets), make([]float64, buckets)
	for _, g := range grants {
		if i := int(g.at.Sub(ft.start) / bucket); i < buckets {
			grantSeries[i]++
		}
	}
	for _, f := range tl.fails {
		if i := int(f.at.Sub(ft.start) / bucket); i < buckets {
			failSeries[i]++
		}
	}
	// Time with zero grants: the empty whole buckets after the one the
	// fault fell in.
	zero := 0
	for i := int(ft.fault.Sub(ft.start)/bucket) + 1; i < buckets; i++ {
		if grantSeries[i] == 0 {
			zero++
		}
	}
	metric(fo.ZeroGrantMs, float64(zero)*ms(bucket))

	if !ft.restart.IsZero() {
		metric(fo.RestartMs, ms(ft.up.Sub(ft.restart)))
		if !firstAfterRestart.IsZero() {
			metric(fo.RecoveryMs, ms(firstAfterRestart.Sub(ft.restart)))
		} else {
			raw.Counts["not_recovered"] = 1
		}
	}
	metric(fo.FailedAttempts, float64(len(tl.fails)))
	metric(fo.LostHolders, float64(lost))
	if lost > 0 {
		metric(fo.LostAfterMs, ms(lostAfter))
	}
	metric(fo.GrantsWhileDown, float64(whileDown))
	if sec := ft.fault.Sub(ft.start).Seconds(); before > 0 && sec > 0 {
		rateBefore := float64(before) / sec
		// While down: from the fault to the restart (the end when the
		// servers stay down).
		rate := float64(during) / windowEnd.Sub(ft.fault).Seconds()
		metric(fo.GrantRateRatio, rate/rateBefore)
		// After: from the moment the restart returned (the servers
		// serve again) to the end of the load.
		if !ft.up.IsZero() && ft.end.After(ft.up) {
			n := 0
			for _, g := range grants {
				if !g.at.Before(ft.up) {
					n++
				}
			}
			metric(fo.GrantRateAfterRatio, float64(n)/ft.end.Sub(ft.up).Seconds()/rateBefore)
		}
	}
	if len(faultAcquires) > 0 {
		slices.Sort(faultAcquires)
		metric(fo.AcquireP99DuringFault, stats.Sample{Xs: faultAcquires, Sorted: true}.Quantile(0.99))
	}
	if len(faultReleases) > 0 {
		slices.Sort(faultReleases)
		metric(fo.ReleaseP99DuringFault, stats.Sample{Xs: faultReleases, Sorted: true}.Quantile(0.99))
	}
	if tokBefore && tokAfter {
		mono := 0.0
		if minAfter > maxBefore {
			mono = 1
		}
		metric(fo.TokensMonotonic, mono)
		metric(fo.TokenGap, float64(minAfter)-float64(maxBefore))
		// A token is the unix second of the latest grant and a counter,
		// so monotonic tokens are promised only across grants more than
		// a second apart (a quick run's restart may come sooner):
		// tokens_promise_broken is recorded only where the promise
		// applies.
		if !last.IsZero() && !firstAfterRestart.IsZero() {
			takeover := firstAfterRestart.Sub(last)
			metric(fo.TakeoverMs, ms(takeover))
			if takeover > time.Second {
				metric(fo.TokensPromiseBroken, 1-mono)
			}
		}
	}
	raw.Counts["grants"] = int64(len(grants))
	raw.Counts["grants_before"], raw.Counts["grants_during"], raw.Counts["grants_after"] = int64(before), int64(during), int64(after)
	raw.Counts["lost_holders"] = int64(lost)
	marks := []float64{ms(ft.fault.Sub(ft.start)), ms(ft.faultDone.Sub(ft.start))}
	if !ft.restart.IsZero() {
		marks = append(marks, ms(ft.restart.Sub(ft.start)), ms(ft.up.Sub(ft.start)))
	}
	raw.Series = []results.Series{
		{Name: "grants_per_100ms", Unit: "count", Values: grantSeries},
		{Name: "failed_per_100ms", Unit: "count", Values: failSeries},
		{Name: "fault_marks", Unit: "ms", Values: marks},
	}
	return raw
}
