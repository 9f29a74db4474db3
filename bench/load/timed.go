package load

import (
	"context"
	"slices"
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

// MaxErrors bounds the distinct error messages a record keeps (a
// Recorder, a Log, a scenario's repetition).
const MaxErrors = 5

// NoteError adds msg to errs unless it is there or errs holds MaxErrors.
func NoteError(errs []string, msg string) []string {
	if len(errs) < MaxErrors && !slices.Contains(errs, msg) {
		errs = append(errs, msg)
	}
	return errs
}

// Recorder holds the closed-loop figures of a run (Log.Recorder). It is
// not safe for concurrent use; merge Recorders with Merge.
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

func (r *Recorder) noteError(msg string) { r.Errors = NoteError(r.Errors, msg) }

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

// Cycle runs one acquire → hold → release cycle on l. A hold of zero releases at once. Errors are returned as they
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
