package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Recorder writes the events of one history file, one JSON line per event.
// Each line goes out in a single Write call, so lines never interleave and
// a process killed mid-run loses none it recorded (give it an unbuffered
// *os.File: Create). It is safe for concurrent use.
//
// Every client process records into its own file; the parent merges the
// files by time (Merge). The first error (a write failed, an event broke
// the format) sticks: later records are dropped and Err reports it, so
// a history with a hole is never taken for a complete one.
type Recorder struct {
	closer io.Closer

	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewRecorder returns a recorder writing to w.
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: w} }

// Create creates (or truncates) the file at path and returns a recorder
// writing to it; Close closes the file.
func Create(path string) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	return &Recorder{w: f, closer: f}, nil
}

// Record validates e and writes it. A zero T is stamped with Now() under
// the recorder's lock, so the lines of one recorder are in time order
// (unless the caller gives a T of its own, as the nemesis does for a
// fault's start). It returns the event as written.
func (r *Recorder) Record(e Event) (Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return e, r.err
	}
	if e.T == 0 {
		e.T = Now()
	}
	if err := e.validate(); err != nil {
		r.err = err
		return e, err
	}
	line, err := json.Marshal(e)
	if err != nil {
		r.err = fmt.Errorf("check: %w", err)
		return e, r.err
	}
	if _, err := r.w.Write(append(line, '\n')); err != nil {
		r.err = fmt.Errorf("check: recording: %w", err)
		return e, r.err
	}
	return e, nil
}

// Err returns the first error of a Record, or nil.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Close closes the file of a recorder made by Create and returns Err
// joined with the close's error; for other recorders it returns Err.
func (r *Recorder) Close() error {
	err := r.Err()
	if r.closer != nil {
		err = errors.Join(err, r.closer.Close())
	}
	return err
}

// Client records the operations of one client process, numbering them
// from 1. It is safe for concurrent use (a watcher of the lost-lock
// signal may run beside the operation loop), but a client process runs
// one operation at a time, as the checkers assume.
type Client struct {
	rec  *Recorder
	name string

	mu   sync.Mutex
	next int64
}

// Client returns a recorder of the operations of the process name.
func (r *Recorder) Client(name string) *Client { return &Client{rec: r, name: name} }

// Invocation is an operation invoked and not yet completed; complete it
// exactly once with OK, Fail or Info.
type Invocation struct {
	c     *Client
	f     Func
	id    int64
	store string
	once  sync.Once
}

// Invoke records the invocation of f with the arguments in args (Store,
// Token, Value; other fields are ignored) and returns it for completion.
// Take it right before the request leaves, so the invocation precedes
// the operation's effect.
func (c *Client) Invoke(f Func, args Event) *Invocation {
	c.mu.Lock()
	c.next++
	id := c.next
	c.mu.Unlock()
	_, _ = c.rec.Record(Event{Process: c.name, Type: Invoke, F: f, ID: id, Store: args.Store, Token: args.Token, Value: args.Value})
	return &Invocation{c: c, f: f, id: id, store: args.Store}
}

// ID returns the operation's id.
func (i *Invocation) ID() int64 { return i.id }

// OK records the completion with its results (Token for Acquire; Value
// for Read; Accepted for Write; Read, Wrote, Accepted and WriteT for
// Increment; Read for ReadCounter).
func (i *Invocation) OK(result Event) {
	i.complete(Event{Type: OK, Token: result.Token, Value: result.Value, Accepted: result.Accepted, Read: result.Read, Wrote: result.Wrote, WriteT: result.WriteT})
}

// Fail records that the operation certainly had no effect, and why.
func (i *Invocation) Fail(err error) { i.complete(Event{Type: Fail, Error: errorText(err)}) }

// Info records that the operation's outcome is unknown, and why; partial
// results (an Increment's Read, Wrote and WriteT) may be given in partial.
func (i *Invocation) Info(err error, partial Event) {
	i.complete(Event{Type: Info, Error: errorText(err), Read: partial.Read, Wrote: partial.Wrote, WriteT: partial.WriteT})
}

func (i *Invocation) complete(e Event) {
	first := false
	i.once.Do(func() { first = true })
	if !first {
		i.c.rec.fail(fmt.Errorf("%w: %s id %d completed twice", ErrBadEvent, i.c.name, i.id))
		return
	}
	e.Process, e.F, e.ID, e.Store = i.c.name, i.f, i.id, i.store
	_, _ = i.c.rec.Record(e)
}

// Lost records that the process learned it no longer holds the lock it
// was granted (before it asked to release it).
func (c *Client) Lost() {
	_, _ = c.rec.Record(Event{Process: c.name, Type: Notice, F: Lost})
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Ptr returns a pointer to v, for the optional fields of an Event.
func Ptr[T any](v T) *T { return &v }
