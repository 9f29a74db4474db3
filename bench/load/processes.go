package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/workload"
)

// A workload whose clients are spread over several OS processes
// (clients.processes > 1) runs them in child processes of the bench
// binary (the hidden workload-client subcommand, ChildMain), each on the
// same engine with its Share of the clients. The parent keeps the
// window's edges; the children stamp their events on a shared epoch of
// CLOCK_MONOTONIC and stream them back.
//
// The pipe protocol, one JSON object per line:
//
//	parent → child: a ProcessSpec, then one Phase per run; EOF: close and exit
//	child → parent: {"ready":true} once its Lockers are open; per phase
//	                {"event":{...}} per request, then {"done":{...}};
//	                {"error":"..."} when it cannot go on

// Command starts a workload-client child: Path with Args (for the bench:
// its own binary and ["workload-client"]).
type Command struct {
	Path string
	Args []string
}

// ProcessSpec is what one child runs.
type ProcessSpec struct {
	// Contender is the contender id in the child's contender table,
	// Addrs its servers, Lease its lease.
	Contender string        `json:"contender"`
	Addrs     []string      `json:"addrs"`
	Lease     time.Duration `json:"lease"`
	// Source and Text are the workload file, parsed again by the child.
	Source string `json:"source"`
	Text   string `json:"text"`
	Quick  bool   `json:"quick"`
	// Process numbers the child among the workload's processes.
	Process int `json:"process"`
}

// Phase is one run of the children.
type Phase struct {
	// Calibrate runs CalibrationTraffic instead of WorkloadTraffic.
	Calibrate bool   `json:"calibrate,omitempty"`
	KeyPrefix string `json:"key_prefix"`
	// Epoch is the run's zero on CLOCK_MONOTONIC, in ns.
	Epoch int64 `json:"epoch"`
}

type childMsg struct {
	Ready bool       `json:"ready,omitempty"`
	Event *Event     `json:"event,omitempty"`
	Done  *childDone `json:"done,omitempty"`
	Error string     `json:"error,omitempty"`
}

// childDone closes a child's phase: its log without the events, and its
// CPU between the window's edges.
type childDone struct {
	Start, End, Stop time.Duration
	Errors           []string
	CPU              time.Duration
}

// monotonic reads CLOCK_MONOTONIC, the clock the processes share.
func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // always there on Linux
	}
	return ts.Nano()
}

// epochAt turns a CLOCK_MONOTONIC instant into this process's time.Time.
func epochAt(mono int64) time.Time {
	return time.Now().Add(time.Duration(mono - monotonic()))
}

// ChildMain is the workload-client subcommand: it reads a ProcessSpec on
// in, opens its share of the clients with the named contender from
// contenders, and runs each Phase it is given on the engine, writing the
// events to out.
func ChildMain(ctx context.Context, contenders []bench.Contender, in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(in)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(m childMsg) error {
		if err := enc.Encode(m); err != nil {
			return err
		}
		return w.Flush()
	}
	fail := func(err error) error {
		_ = send(childMsg{Error: err.Error()})
		return err
	}
	var spec ProcessSpec
	if err := dec.Decode(&spec); err != nil {
		return fail(fmt.Errorf("load: reading the process spec: %w", err))
	}
	wl, _, err := workload.Parse(spec.Source, []byte(spec.Text))
	if err != nil {
		return fail(err)
	}
	i := slices.IndexFunc(contenders, func(c bench.Contender) bool { return c.Name == spec.Contender })
	if i < 0 {
		return fail(fmt.Errorf("load: unknown contender %q", spec.Contender))
	}
	c := contenders[i]
	share := ShareOf(wl, spec.Process)
	lockers := make([]bench.Locker, share.Count)
	defer func() {
		for _, l := range lockers {
			if l != nil {
				l.Close()
			}
		}
	}()
	for j := range lockers {
		if lockers[j], err = c.Open(ctx, spec.Addrs, spec.Lease); err != nil {
			return fail(fmt.Errorf("load: opening %s for client %d: %w", c.Name, share.First+j, err))
		}
	}
	locker := func(client int) bench.Locker { return lockers[client-share.First] }
	if err := send(childMsg{Ready: true}); err != nil {
		return err
	}
	for {
		var ph Phase
		if err := dec.Decode(&ph); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fail(fmt.Errorf("load: reading a phase: %w", err))
		}
		t := WorkloadTraffic(wl, spec.Quick, share, locker, ph.KeyPrefix)
		if ph.Calibrate {
			t = CalibrationTraffic(wl, spec.Quick, share, locker, ph.KeyPrefix)
		}
		t.Epoch = epochAt(ph.Epoch)
		var cpu [2]time.Duration
		t.Edge = func(_ context.Context, e Edge) error {
			var err error
			cpu[e], err = host.SelfCPU()
			return err
		}
		log, err := Run(ctx, t)
		if err != nil {
			return fail(err)
		}
		for i := range log.Events {
			if err := send(childMsg{Event: &log.Events[i]}); err != nil {
				return err
			}
		}
		done := childDone{Start: log.Start, End: log.End, Stop: log.Stop, Errors: log.Errors, CPU: cpu[WindowEnd] - cpu[WindowStart]}
		if err := send(childMsg{Done: &done}); err != nil {
			return err
		}
	}
}

// Processes are the running children of one multi-process workload. Its
// methods are called from one goroutine.
type Processes struct {
	children []*child
}

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// msgs carries the child's messages, read by one goroutine until its
	// stdout ends; readErr is why it ended, set before msgs closes.
	msgs    chan childMsg
	readErr error
	stderr  *limitedWriter
}

// read decodes the child's messages into msgs until its stdout ends.
func (c *child) read(stdout io.Reader) {
	defer close(c.msgs)
	dec := json.NewDecoder(stdout)
	for {
		var m childMsg
		if err := dec.Decode(&m); err != nil {
			c.readErr = err
			return
		}
		c.msgs <- m
	}
}

// readyTimeout bounds how long a child may take to open its Lockers.
const readyTimeout = 2 * time.Minute

// StartProcesses starts w.Processes children with cmd, each with spec
// (numbered), and waits until every one has opened its Lockers.
func StartProcesses(ctx context.Context, cmd Command, w workload.Workload, spec ProcessSpec) (*Processes, error) {
	ps := &Processes{}
	for p := range w.Processes {
		c := exec.CommandContext(ctx, cmd.Path, cmd.Args...)
		stdin, err := c.StdinPipe()
		if err != nil {
			ps.Close()
			return nil, fmt.Errorf("load: %w", err)
		}
		stdout, err := c.StdoutPipe()
		if err != nil {
			ps.Close()
			return nil, fmt.Errorf("load: %w", err)
		}
		ch := &child{cmd: c, stdin: stdin, msgs: make(chan childMsg, 256), stderr: &limitedWriter{n: 4096}}
		c.Stderr = ch.stderr
		if err := c.Start(); err != nil {
			ps.Close()
			return nil, fmt.Errorf("load: starting a workload client: %w", err)
		}
		ps.children = append(ps.children, ch)
		go ch.read(stdout)
		s := spec
		s.Process = p
		if err := json.NewEncoder(stdin).Encode(s); err != nil {
			ps.Close()
			return nil, fmt.Errorf("load: workload client %d: %w", p, err)
		}
	}
	readyCtx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for p, ch := range ps.children {
		m, err := ch.next(readyCtx)
		if err == nil && !m.Ready {
			err = fmt.Errorf("said %+v before it was ready", m)
		}
		if err != nil {
			ps.Close()
			return nil, fmt.Errorf("load: workload client %d: %w", p, err)
		}
	}
	return ps, nil
}

// next returns the child's next message.
func (c *child) next(ctx context.Context) (childMsg, error) {
	select {
	case m, ok := <-c.msgs:
		switch {
		case !ok:
			return m, fmt.Errorf("%w: %w (stderr: %s)", errExited, c.readErr, c.stderr.String())
		case m.Error != "":
			return m, errors.New(m.Error)
		}
		return m, nil
	case <-ctx.Done():
		return childMsg{}, ctx.Err()
	}
}

// errExited: a child's output ended before it said what was expected.
var errExited = errors.New("the process ended")

// startMargin is how far ahead of now a phase's epoch lies, so that every
// child has read it before it comes.
const startMargin = 100 * time.Millisecond

// Run runs one phase on every child and returns the merged log and the
// children's CPU between the window's edges. edge, when set, is called
// in this process at the window's edges (the parent's reads of servers
// and counters), warmup and window after the epoch: the phase's as the
// children run it. The log's window is where the children's overlap.
func (ps *Processes) Run(ctx context.Context, ph Phase, warmup, window time.Duration, edge func(context.Context, Edge) error) (*Log, time.Duration, error) {
	ph.Epoch = monotonic() + int64(startMargin)
	epoch := epochAt(ph.Epoch)
	for p, ch := range ps.children {
		if err := json.NewEncoder(ch.stdin).Encode(ph); err != nil {
			return nil, 0, fmt.Errorf("load: workload client %d: %w", p, err)
		}
	}
	type result struct {
		events []Event
		done   childDone
		err    error
	}
	results := make([]result, len(ps.children))
	var wg sync.WaitGroup
	for p, ch := range ps.children {
		wg.Go(func() {
			for {
				m, err := ch.next(ctx)
				switch {
				case err != nil:
					results[p].err = fmt.Errorf("load: workload client %d: %w", p, err)
					return
				case m.Event != nil:
					results[p].events = append(results[p].events, *m.Event)
				case m.Done != nil:
					results[p].done = *m.Done
					return
				}
			}
		})
	}
	log := &Log{Start: warmup, End: warmup + window}
	var edgeErr error
	for e, at := range []time.Duration{warmup, warmup + window} {
		if err := bench.Sleep(ctx, time.Until(epoch.Add(at))); err != nil {
			edgeErr = err
			break
		}
		log.Edges[e] = time.Since(epoch)
		if edge != nil {
			if err := edge(ctx, Edge(e)); err != nil {
				edgeErr = fmt.Errorf("load: reading the window's edge: %w", err)
				break
			}
		}
	}
	wg.Wait()
	var cpu time.Duration
	for p, r := range results {
		if r.err != nil {
			return nil, 0, r.err
		}
		// A window that opens once each client warmed up opens at its
		// own time in each child: the run's is where they all overlap.
		if p == 0 {
			log.Start, log.End = r.done.Start, r.done.End
		}
		log.Start, log.End = max(log.Start, r.done.Start), min(log.End, r.done.End)
		log.Events = append(log.Events, r.events...)
		log.Stop = max(log.Stop, r.done.Stop)
		cpu += r.done.CPU
		for _, e := range r.done.Errors {
			log.Errors = NoteError(log.Errors, e)
		}
	}
	if edgeErr != nil {
		return nil, 0, edgeErr
	}
	slices.SortStableFunc(log.Events, func(a, b Event) int { return cmpDuration(a.Intended, b.Intended) })
	return log, cpu, nil
}

// closeGrace is how long Close lets the children close their Lockers and
// exit before it kills them.
const closeGrace = 10 * time.Second

// Close ends every child: EOF on its stdin, then a kill after closeGrace.
func (ps *Processes) Close() {
	for _, ch := range ps.children {
		ch.stdin.Close()
	}
	for _, ch := range ps.children {
		done := make(chan struct{})
		go func() {
			for range ch.msgs { // drain, so that the reader ends
			}
			_ = ch.cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(closeGrace):
			_ = ch.cmd.Process.Kill()
			<-done
		}
	}
}

// limitedWriter keeps the first n bytes written to it; safe for
// concurrent use.
type limitedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
	n  int
}

func (w *limitedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(w.b.String())
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.n - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
