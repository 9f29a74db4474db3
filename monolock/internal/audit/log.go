package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by Reopen after Close.
var ErrClosed = errors.New("audit: log closed")

// Stdout is the path that selects standard output instead of a file.
const Stdout = "-"

// DefaultQueue is the number of events a Log holds for its writer when
// Open is given no size: about 10 MB of lines at most.
const DefaultQueue = 1 << 16

// Log is an audit log open on a file or on standard output.
//
// Enqueue never blocks and does no I/O, so it may be called under a lock
// that must not wait for a disk or a pipe (the lock table's): it appends
// the event to a bounded in-memory queue, and one writer goroutine writes
// the queue in order, one write call per line, so lines never interleave
// and events enqueued in an order appear in that order. When the queue is
// full — the sink has stalled (a full disk, a blocked stdout pipe) or is
// slower than the events — the event is dropped and counted (Dropped):
// the server keeps granting and releasing locks rather than waiting for
// its audit sink. There is no fsync per line: the log follows the kernel's
// page cache, like any append-only log file.
//
// All methods are safe for concurrent use.
type Log struct {
	path     string
	capacity int
	report   func(error)

	mu      sync.Mutex
	pending []item // queued for the writer, oldest first
	closed  bool
	wake    chan struct{} // capacity 1: the writer has work
	done    chan struct{} // closed when the writer has exited

	queued  atomic.Int64 // events in pending, for Queued
	dropped atomic.Uint64
}

// item is one entry of the queue: an event, or a switch to a reopened
// file, which takes effect in queue order.
type item struct {
	event  Event
	reopen *os.File
}

// Open opens the audit log at path for appending, creating it if needed, or
// standard output when path is Stdout ("-"), and starts its writer. queue
// bounds the events waiting for the writer (DefaultQueue when not
// positive). report, when not nil, is called by the writer after each
// event it writes, with the write's error or nil; it runs on the writer
// goroutine, so it may log.
func Open(path string, queue int, report func(error)) (*Log, error) {
	var w io.Writer = os.Stdout
	var file *os.File
	if path != Stdout {
		f, err := openFile(path)
		if err != nil {
			return nil, err
		}
		w, file = f, f
	}
	return start(path, w, file, queue, report), nil
}

// start makes a Log writing to w (file, when not nil, is w and is closed
// by the writer) and starts its writer.
func start(path string, w io.Writer, file *os.File, queue int, report func(error)) *Log {
	if queue <= 0 {
		queue = DefaultQueue
	}
	if report == nil {
		report = func(error) {}
	}
	l := &Log{path: path, capacity: queue, report: report, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go l.write(w, file)
	return l
}

func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return f, nil
}

// Path returns the path the log was opened with ("-" for standard output).
func (l *Log) Path() string { return l.path }

// Capacity returns the bound of the queue.
func (l *Log) Capacity() int { return l.capacity }

// Enqueue queues one event for writing and reports whether it was queued:
// false when the queue is full (the event is dropped and counted) or the
// log is closed. An event whose Time is zero is stamped with the current
// time. It never blocks on the sink.
func (l *Log) Enqueue(e Event) bool {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	if len(l.pending) >= l.capacity {
		l.dropped.Add(1)
		return false
	}
	l.pending = append(l.pending, item{event: e})
	l.queued.Add(1)
	l.signal()
	return true
}

// Dropped returns the number of events dropped because the queue was full.
func (l *Log) Dropped() uint64 { return l.dropped.Load() }

// Queued returns the number of events waiting for the writer.
func (l *Log) Queued() int { return int(l.queued.Load()) }

// signal wakes the writer. Caller holds l.mu.
func (l *Log) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Reopen opens the path again; events enqueued after Reopen returns go to
// the new file, those before it to the old one, which is then closed. So
// a log renamed away by a rotation tool is followed by a fresh file at the
// same path. If the path cannot be opened the log keeps writing to the
// file it has and the error says why. It does not wait for the writer,
// and it is a no-op for standard output.
func (l *Log) Reopen() error {
	if l.path == Stdout {
		return nil
	}
	f, err := openFile(l.path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		f.Close()
		return ErrClosed
	}
	l.pending = append(l.pending, item{reopen: f}) // never dropped
	l.signal()
	return nil
}

// Close stops the log from taking events and waits until the writer has
// written every queued event and closed the file (standard output is left
// open), or until ctx ends: then it returns ctx.Err(), and the writer,
// stuck on its sink, finishes on its own if the sink ever moves. Closing
// twice is harmless.
func (l *Log) Close(ctx context.Context) error {
	l.mu.Lock()
	l.closed = true
	l.signal()
	l.mu.Unlock()
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// write is the writer goroutine: it writes the queue in order until the
// log is closed and the queue is empty.
func (l *Log) write(w io.Writer, file *os.File) {
	defer close(l.done)
	var batch []item
	var buf []byte
	for {
		l.mu.Lock()
		for len(l.pending) == 0 && !l.closed {
			l.mu.Unlock()
			<-l.wake
			l.mu.Lock()
		}
		batch, l.pending = l.pending, batch[:0]
		closed := l.closed
		l.mu.Unlock()
		for i, it := range batch {
			if it.reopen != nil {
				if file != nil {
					file.Close()
				}
				w, file = it.reopen, it.reopen
				continue
			}
			var err error
			if buf, err = appendLine(buf[:0], it.event); err == nil {
				if _, err = w.Write(buf); err != nil {
					err = fmt.Errorf("audit: write %s: %w", l.path, err)
				}
			}
			l.queued.Add(-1)
			l.report(err)
			batch[i] = item{}
		}
		if closed && len(batch) == 0 {
			if file != nil {
				file.Close()
			}
			return
		}
	}
}
