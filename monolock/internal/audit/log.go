package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// ErrClosed is returned by Write and Reopen after Close.
var ErrClosed = errors.New("audit: log closed")

// Stdout is the path that selects standard output instead of a file.
const Stdout = "-"

// Log is an audit log open on a file or on standard output. Each event is
// written with a single write call, so lines never interleave. There is no
// fsync per line: the log follows the kernel's page cache, like any
// append-only log file.
//
// All methods are safe for concurrent use; Write calls are serialized, so
// events written by one goroutine in order appear in that order.
type Log struct {
	path string

	mu     sync.Mutex
	w      io.Writer
	file   *os.File // nil for standard output
	buf    []byte
	closed bool
}

// Open opens the audit log at path for appending, creating it if needed, or
// standard output when path is Stdout ("-").
func Open(path string) (*Log, error) {
	l := &Log{path: path}
	if path == Stdout {
		l.w = os.Stdout
		return l, nil
	}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	l.w, l.file = f, f
	return l, nil
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

// Write appends one event as a JSON line. An event whose Time is zero is
// stamped with the current time.
func (l *Log) Write(e Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	b, err := appendLine(l.buf[:0], e)
	if err != nil {
		return err
	}
	l.buf = b
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("audit: write %s: %w", l.path, err)
	}
	return nil
}

// Reopen opens the path again and switches to the new file, so that a log
// renamed away by a rotation tool is followed by a fresh file at the same
// path. If the path cannot be opened the log keeps writing to the file it
// has and the error says why. It is a no-op for standard output.
func (l *Log) Reopen() error {
	if l.path == Stdout {
		return nil
	}
	f, err := openFile(l.path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		f.Close()
		return ErrClosed
	}
	old := l.file
	l.w, l.file = f, f
	l.mu.Unlock()
	if err := old.Close(); err != nil {
		return fmt.Errorf("audit: close the previous file: %w", err)
	}
	return nil
}

// Close closes the file; standard output is left open. Write and Reopen
// after Close return ErrClosed; closing twice is harmless.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.file == nil {
		return nil
	}
	return l.file.Close()
}
