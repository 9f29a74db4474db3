package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench/run"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// isTerminal reports whether f is a character device and CI is unset: live
// bars there, plain lines everywhere else.
func isTerminal(f *os.File) bool {
	if os.Getenv("CI") != "" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// lineProgress prints one line per step: for CI logs and pipes.
type lineProgress struct {
	w     io.Writer
	start time.Time
}

func (p *lineProgress) Start(s run.Step) {
	p.start = time.Now()
	fmt.Fprintf(p.w, "[%d/%d] %s %s %s repetition %d/%d (ETA %s)\n",
		s.Index, s.Total, s.Scenario, s.Variant, s.Contender, s.Repetition, s.Repetitions, s.Remaining.Round(time.Second))
}

func (p *lineProgress) Finish(s run.Step, err error) {
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(p.w, "[%d/%d] interrupted\n", s.Index, s.Total)
	case err != nil:
		fmt.Fprintf(p.w, "[%d/%d] failed after %s: %v\n", s.Index, s.Total, time.Since(p.start).Round(time.Millisecond), err)
	}
	if s.Skipped != "" {
		fmt.Fprintf(p.w, "[%d/%d] not measured: %s\n", s.Index, s.Total, s.Skipped)
	}
}

// barProgress is a live mpb bar: current scenario, variant, contender and
// the ETA.
type barProgress struct {
	p   *mpb.Progress
	bar *mpb.Bar
	mu  sync.Mutex // guards label and eta, read by the render goroutine
	lbl string
	eta time.Duration
}

func newBarProgress(w io.Writer) *barProgress {
	b := &barProgress{p: mpb.New(mpb.WithOutput(w), mpb.WithWidth(40))}
	return b
}

func (b *barProgress) Start(s run.Step) {
	b.mu.Lock()
	b.lbl = fmt.Sprintf("%s %s %s rep %d/%d", s.Scenario, s.Variant, s.Contender, s.Repetition, s.Repetitions)
	b.eta = s.Remaining
	b.mu.Unlock()
	if b.bar == nil {
		b.bar = b.p.AddBar(int64(s.Total),
			mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
				b.mu.Lock()
				defer b.mu.Unlock()
				return fmt.Sprintf("%-44s", b.lbl)
			})),
			mpb.AppendDecorators(decor.CountersNoUnit("%d/%d "), decor.Any(func(decor.Statistics) string {
				b.mu.Lock()
				defer b.mu.Unlock()
				return "ETA " + b.eta.Round(time.Second).String()
			})),
		)
	}
}

func (b *barProgress) Finish(s run.Step, err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(b.p, "%s %s %s repetition %d failed: %v\n", s.Scenario, s.Variant, s.Contender, s.Repetition, err)
	}
	if s.Skipped != "" && s.Repetition == 1 {
		fmt.Fprintf(b.p, "%s %s %s not measured: %s\n", s.Scenario, s.Variant, s.Contender, s.Skipped)
	}
	b.bar.Increment()
}

// Close stops the bar (aborting it when the run ended early) and waits for
// the last render.
func (b *barProgress) Close() {
	if b.bar != nil && !b.bar.Completed() {
		b.bar.Abort(false)
	}
	b.p.Wait()
}
