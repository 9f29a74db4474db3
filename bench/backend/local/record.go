package local

import (
	"bufio"
	"context"
	"io"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// recordFeed keeps the standard output lines of a recording server's
// current process, each with when it was read, and wakes its followers.
// A recording run's record is small (a chaos step's grants and ends).
type recordFeed struct {
	mu      sync.Mutex
	run     int // counts the processes started
	running bool
	began   time.Time     // when the current process's output was first read
	lines   []recordLine  // of the current process
	changed chan struct{} // closed and replaced on every change
}

type recordLine struct {
	at   time.Time
	text []byte
}

func newRecordFeed() *recordFeed { return &recordFeed{changed: make(chan struct{})} }

// read reads a new process's standard output into the feed until it
// ends, then marks the process ended.
func (f *recordFeed) read(stdout io.Reader) {
	f.mu.Lock()
	f.run++
	f.running, f.lines, f.began = true, nil, time.Now()
	f.notify()
	f.mu.Unlock()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f.mu.Lock()
		f.lines = append(f.lines, recordLine{at: time.Now(), text: append([]byte(nil), sc.Bytes()...)})
		f.notify()
		f.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, stdout) // past an over-long line: the child must not block
	f.mu.Lock()
	f.running = false
	f.notify()
	f.mu.Unlock()
}

// notify wakes the followers; f.mu is held.
func (f *recordFeed) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// follow implements bench.RecordFollower.FollowRecord for the feed.
func (f *recordFeed) follow(ctx context.Context, since time.Time, started func(from time.Time), line func([]byte)) error {
	f.mu.Lock()
	if !f.running {
		f.mu.Unlock()
		return bench.ErrNotRunning
	}
	run, next, from := f.run, 0, since
	if f.began.After(from) {
		from = f.began
	}
	for next < len(f.lines) && f.lines[next].at.Before(from) {
		next++
	}
	f.mu.Unlock()
	started(from)
	for {
		f.mu.Lock()
		var fresh []recordLine
		if f.run == run {
			fresh = f.lines[next:]
			next = len(f.lines)
		}
		ended, changed := f.run != run || !f.running, f.changed
		f.mu.Unlock()
		for _, l := range fresh {
			line(l.text)
		}
		if ended {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
