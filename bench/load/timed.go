package load

import (
	"context"
	"errors"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench"
)

// Histogram range: 1ns to 10 minutes at 3 significant digits, so a waiter
// that queues for a whole lease still fits.
const (
	histLowest  = 1
	histHighest = int64(10 * time.Minute)
	histDigits  = 3
)

// NewHistogram returns an empty latency histogram in nanoseconds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histDigits)
}

// maxErrors bounds the distinct error messages a Recorder keeps.
const maxErrors = 5

// Recorder collects what Timed measures. One Recorder belongs to one worker
// goroutine: it is not safe for concurrent use; merge per-worker Recorders
// with Merge after the workers stop.
type Recorder struct {
	// Acquire holds acquire latencies (call to grant), in ns.
	Acquire *hdrhistogram.Histogram
	// Cycle holds full cycle latencies (call to acquire until Release
	// returned, hold included), in ns.
	Cycle *hdrhistogram.Histogram
	// Cycles counts completed acquire+release cycles.
	Cycles int64
	// Failures counts failed acquires and releases (cancellation by the
	// harness excluded); GaveUp is the part of Failures that were give-ups.
	Failures, GaveUp int64
	// Lost counts grants whose Lost channel closed before Release.
	Lost int64
	// Errors keeps the first few distinct error messages.
	Errors []string
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{Acquire: NewHistogram(), Cycle: NewHistogram()}
}

// Merge adds o's measurements to r.
func (r *Recorder) Merge(o *Recorder) {
	r.Acquire.Merge(o.Acquire)
	r.Cycle.Merge(o.Cycle)
	r.Cycles += o.Cycles
	r.Failures += o.Failures
	r.GaveUp += o.GaveUp
	r.Lost += o.Lost
	for _, e := range o.Errors {
		r.noteError(e)
	}
}

func (r *Recorder) noteError(msg string) {
	if len(r.Errors) >= maxErrors {
		return
	}
	for _, e := range r.Errors {
		if e == msg {
			return
		}
	}
	r.Errors = append(r.Errors, msg)
}

func (r *Recorder) fail(ctx context.Context, err error) {
	if stopped(ctx) {
		return // the harness stopped the worker; not a failure of the lock
	}
	r.Failures++
	if errors.Is(err, bench.ErrGaveUp) {
		r.GaveUp++
	}
	r.noteError(err.Error())
}

// stopped reports whether ctx ended or its deadline passed. The deadline
// check matters: a dial or read bounded by ctx's deadline can fail with an
// i/o timeout a moment before ctx's own timer marks it done.
func stopped(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// Timed decorates l so that every Acquire and Release through it is timed
// into rec with the monotonic clock of the bench process. Timing lives here,
// around the seam, never inside a contender. The returned Locker is meant
// for the one worker that owns rec; its Close closes l.
func Timed(l bench.Locker, rec *Recorder) bench.Locker { return &timed{l, rec} }

type timed struct {
	bench.Locker
	rec *Recorder
}

func (t *timed) Acquire(ctx context.Context, key string) (bench.Held, error) {
	start := time.Now()
	h, err := t.Locker.Acquire(ctx, key)
	if err != nil {
		t.rec.fail(ctx, err)
		return nil, err
	}
	_ = t.rec.Acquire.RecordValue(int64(time.Since(start)))
	return &timedHeld{Held: h, start: start, rec: t.rec}, nil
}

type timedHeld struct {
	bench.Held
	start time.Time
	rec   *Recorder
}

func (h *timedHeld) Release(ctx context.Context) error {
	select {
	case <-h.Lost():
		h.rec.Lost++
	default:
	}
	if err := h.Held.Release(ctx); err != nil {
		h.rec.fail(ctx, err)
		return err
	}
	_ = h.rec.Cycle.RecordValue(int64(time.Since(h.start)))
	h.rec.Cycles++
	return nil
}

// Cycle runs one acquire → hold → release cycle on l (normally a Timed
// Locker). A hold of zero releases at once. Errors are returned as they
// are; ctx.Err() when ctx ended.
func Cycle(ctx context.Context, l bench.Locker, key string, hold time.Duration) error {
	h, err := l.Acquire(ctx, key)
	if err != nil {
		return err
	}
	if hold > 0 {
		t := time.NewTimer(hold)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		case <-h.Lost():
			t.Stop()
		}
	}
	// Release even when ctx ended: the lock must not outlive the worker.
	return h.Release(context.WithoutCancel(ctx))
}
