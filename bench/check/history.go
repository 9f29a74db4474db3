package check

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
)

// maxLine bounds one line of a history file; events are a few hundred
// bytes.
const maxLine = 1 << 20

// Operation is one client operation of a history: its invocation paired
// with its completion.
type Operation struct {
	// Invoke is the invocation; its index in History.Events is Index.
	Invoke Event
	Index  int
	// Done is the completion, or nil while the operation is pending (it
	// never completed before the history ended); its index is DoneIndex.
	Done      *Event
	DoneIndex int
}

// Outcome is the completion's type, or Info for a pending operation: its
// outcome is unknown.
func (o Operation) Outcome() Type {
	if o.Done == nil {
		return Info
	}
	return o.Done.Type
}

// Accepted reports whether the operation completed OK and the store
// accepted its write.
func (o Operation) Accepted() bool {
	return o.Done != nil && o.Done.Type == OK && o.Done.Accepted != nil && *o.Done.Accepted
}

// FaultSpan is one applied fault of a history.
type FaultSpan struct {
	ID    int64 `json:"id"`
	Fault Fault `json:"fault"`
	// From is the fault's start; To its end, or the history's last
	// event when the history has no end for it.
	From Mono `json:"from"`
	To   Mono `json:"to"`
	// FromAck and ToAck are the start's and the end's AckT (a client
	// pause: when the process was seen stopped, and running again); 0
	// when not recorded.
	FromAck Mono `json:"from_ack,omitempty"`
	ToAck   Mono `json:"to_ack,omitempty"`
}

// frozen returns the span in which a client pause certainly held its
// process stopped: from when it was seen stopped (else from the start)
// to when SIGCONT was sent (the end's t).
func (f FaultSpan) frozen() (from, to Mono) {
	if f.FromAck != 0 {
		return f.FromAck, f.To
	}
	return f.From, f.To
}

// History is a validated history: every event in time order, the client
// operations paired, the notices and the faults.
type History struct {
	// Events holds every event, sorted by T (stably: events with the same
	// T keep the order they were given in).
	Events []Event
	// Ops are the client operations in order of invocation.
	Ops []Operation
	// Notices are the Lost notices, in time order, as indexes into Events.
	Notices []int
	// ServerEvents are the server events (Type Server), in time order, as
	// indexes into Events.
	ServerEvents []int
	// Faults are the applied faults in order of start; Skipped and
	// Failed the fault events of faults that were not applied.
	Faults          []FaultSpan
	Skipped, Failed []Event
}

// Start and End are the times of the first and the last event (0 for an
// empty history).
func (h *History) Start() Mono {
	if len(h.Events) == 0 {
		return 0
	}
	return h.Events[0].T
}

// End returns the time of the last event.
func (h *History) End() Mono {
	if len(h.Events) == 0 {
		return 0
	}
	return h.Events[len(h.Events)-1].T
}

// opKey identifies an operation.
type opKey struct {
	process string
	id      int64
}

// NewHistory sorts events by time and validates and pairs them: every
// event must carry what its type needs (see the package documentation), a
// completion must follow its invocation (same process, id and function),
// an operation has at most one completion, an id is invoked once, and a
// fault ends only after it started. The events are not modified.
func NewHistory(events []Event) (*History, error) {
	h := &History{Events: slices.Clone(events)}
	slices.SortStableFunc(h.Events, func(a, b Event) int { return cmp.Compare(a.T, b.T) })
	open := map[opKey]int{}   // → index into h.Ops
	faults := map[int64]int{} // → index into h.Faults
	for i, e := range h.Events {
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("%w (event %d at t=%d of %s)", err, i, e.T, e.Process)
		}
		k := opKey{e.Process, e.ID}
		switch e.Type {
		case Invoke:
			if _, dup := open[k]; dup {
				return nil, fmt.Errorf("%w: %s invoked id %d twice", ErrBadEvent, e.Process, e.ID)
			}
			open[k] = len(h.Ops)
			h.Ops = append(h.Ops, Operation{Invoke: e, Index: i, DoneIndex: -1})
		case OK, Fail, Info:
			j, ok := open[k]
			switch {
			case !ok:
				return nil, fmt.Errorf("%w: %s %s of %s id %d without its invocation", ErrBadEvent, e.F, e.Type, e.Process, e.ID)
			case h.Ops[j].Done != nil:
				return nil, fmt.Errorf("%w: %s id %d completed twice", ErrBadEvent, e.Process, e.ID)
			case h.Ops[j].Invoke.F != e.F:
				return nil, fmt.Errorf("%w: %s id %d invoked as %s, completed as %s", ErrBadEvent, e.Process, e.ID, h.Ops[j].Invoke.F, e.F)
			case e.WriteT != nil && (*e.WriteT < h.Ops[j].Invoke.T || *e.WriteT > e.T):
				return nil, fmt.Errorf("%w: %s id %d: write_t %d outside its invocation and completion", ErrBadEvent, e.Process, e.ID, *e.WriteT)
			}
			done := e
			h.Ops[j].Done, h.Ops[j].DoneIndex = &done, i
		case Notice:
			h.Notices = append(h.Notices, i)
		case Server:
			h.ServerEvents = append(h.ServerEvents, i)
		case Start:
			if _, dup := faults[e.ID]; dup {
				return nil, fmt.Errorf("%w: fault %d started twice", ErrBadEvent, e.ID)
			}
			faults[e.ID] = len(h.Faults)
			h.Faults = append(h.Faults, FaultSpan{ID: e.ID, Fault: *e.Fault, From: e.T, FromAck: deref(e.AckT)})
		case End:
			j, ok := faults[e.ID]
			if !ok || h.Faults[j].To != 0 {
				return nil, fmt.Errorf("%w: fault %d ended without a start or twice", ErrBadEvent, e.ID)
			}
			h.Faults[j].To, h.Faults[j].ToAck = e.T, deref(e.AckT)
		case Skip:
			h.Skipped = append(h.Skipped, e)
		case FaultFailed:
			h.Failed = append(h.Failed, e)
		}
	}
	for i := range h.Faults {
		if h.Faults[i].To == 0 {
			h.Faults[i].To = h.End()
		}
	}
	return h, nil
}

// ReadHistory reads a history in the JSON-lines format (one Event per line; blank
// lines are ignored) and validates it with NewHistory. Unknown fields are
// an error: a misspelt field would otherwise be a silent zero.
func ReadHistory(r io.Reader) (*History, error) {
	events, err := readEvents(r)
	if err != nil {
		return nil, err
	}
	return NewHistory(events)
}

// Merge reads the histories of several sources (the files the client
// processes and the nemesis wrote) and returns them as one. Events with
// the same time keep the order of srcs.
func Merge(srcs ...io.Reader) (*History, error) {
	var all []Event
	for i, src := range srcs {
		events, err := readEvents(src)
		if err != nil {
			return nil, fmt.Errorf("source %d: %w", i+1, err)
		}
		all = append(all, events...)
	}
	return NewHistory(all)
}

func readEvents(r io.Reader) ([]Event, error) {
	var events []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Event
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrBadEvent, n, err)
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("check: reading history: %w", err)
	}
	return events, nil
}

// Write writes the history's events to w, one JSON line each, in time
// order: the format ReadHistory reads.
func (h *History) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, e := range h.Events {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("check: writing history: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("check: writing history: %w", err)
	}
	return nil
}

// processes returns the client processes of the history's operations,
// sorted.
func (h *History) processes() []string {
	seen := map[string]bool{}
	for _, o := range h.Ops {
		seen[o.Invoke.Process] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// Stores returns the stores named by the history's operations, sorted.
func (h *History) Stores() []string {
	seen := map[string]bool{}
	for _, o := range h.Ops {
		if o.Invoke.Store != "" {
			seen[o.Invoke.Store] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// deref returns *t, or 0 for nil.
func deref(t *Mono) Mono {
	if t == nil {
		return 0
	}
	return *t
}
