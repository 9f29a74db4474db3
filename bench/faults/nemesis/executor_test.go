package nemesis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
)

// The core's servers are nemesis targets as they are.
var (
	_ Server      = bench.Server(nil)
	_ ClockServer = bench.ClockShiftedServer(nil)
)

// fakeLog records the calls made on fake targets, with the time since the
// run began (fake time: the tests run in a synctest bubble).
type fakeLog struct {
	begin time.Time
	mu    sync.Mutex
	calls []string
}

func (l *fakeLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf("%v ", time.Since(l.begin).Round(time.Millisecond))+fmt.Sprintf(format, args...))
}

type fakeClient struct {
	name        string
	log         *fakeLog
	failPause   bool
	noPartition bool
}

func (c *fakeClient) Name() string { return c.name }
func (c *fakeClient) Pause(context.Context) error {
	if c.failPause {
		return errors.New("no such process")
	}
	c.log.add("pause %s", c.name)
	return nil
}
func (c *fakeClient) Resume(context.Context) error   { c.log.add("resume %s", c.name); return nil }
func (c *fakeClient) LoseHost(context.Context) error { c.log.add("lose-host %s", c.name); return nil }
func (c *fakeClient) RestoreHost(context.Context) error {
	c.log.add("restore-host %s", c.name)
	return nil
}
func (c *fakeClient) Partition(_ context.Context, d Direction) error {
	if c.noPartition {
		return fmt.Errorf("fake: %w", bench.ErrNotSupported)
	}
	c.log.add("partition %s %s", c.name, d)
	return nil
}
func (c *fakeClient) Heal(context.Context) error { c.log.add("heal %s", c.name); return nil }

type fakeServer struct {
	name       string
	log        *fakeLog
	restart    time.Duration // how long a restart takes
	restartErr error
}

func (s *fakeServer) Name() string                  { return s.name }
func (s *fakeServer) Kill(context.Context) error    { s.log.add("kill %s", s.name); return nil }
func (s *fakeServer) Pause(context.Context) error   { s.log.add("pause %s", s.name); return nil }
func (s *fakeServer) Unpause(context.Context) error { s.log.add("unpause %s", s.name); return nil }
func (s *fakeServer) Restart(ctx context.Context) error {
	select {
	case <-time.After(s.restart):
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.restartErr != nil {
		return s.restartErr
	}
	s.log.add("restarted %s", s.name)
	return nil
}
func (s *fakeServer) ShiftClock(_ context.Context, d time.Duration) error {
	s.log.add("shift %s %v", s.name, d)
	return nil
}

func readHistory(t *testing.T, buf *bytes.Buffer) *check.History {
	t.Helper()
	h, err := check.ReadHistory(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestExecutorRecordsInOrder runs a hand-made schedule against fake
// targets: every fault is applied and healed at its time, in order, a
// slow restart delays the next server fault, and skips and failures are
// recorded as such.
func TestExecutorRecordsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &fakeLog{begin: time.Now()}
		c1 := &fakeClient{name: "c1", log: log}
		c2 := &fakeClient{name: "c2", log: log, noPartition: true}
		c3 := &fakeClient{name: "c3", log: log, failPause: true}
		s1 := &fakeServer{name: "s1", log: log}
		s2 := &fakeServer{name: "s2", log: log, restart: 300 * time.Millisecond}
		ms := time.Millisecond
		s := Schedule{Faults: []Fault{
			{ID: 1, Kind: ServerPause, Start: 0, Duration: 500 * ms, Server: 1},
			{ID: 2, Kind: ClientPause, Start: 100 * ms, Duration: 200 * ms, Client: 1},
			{ID: 3, Kind: ClockStep, Start: 800 * ms, Duration: 200 * ms, Server: 7, Step: 6 * time.Second},
			{ID: 4, Kind: ClientPartition, Start: 900 * ms, Duration: 100 * ms, Client: 2, Direction: ToServer},
			{ID: 5, Kind: ServerKill, Start: 1200 * ms, Duration: 100 * ms, Server: 2},
			{ID: 6, Kind: ServerPause, Start: 1400 * ms, Duration: 100 * ms, Server: 3}, // s1; waits for s2's restart
			{ID: 7, Kind: ClientHostLoss, Start: 1500 * ms, Duration: 100 * ms, Client: 2},
			{ID: 8, Kind: ClientPause, Start: 1600 * ms, Duration: 100 * ms, Client: 3},
		}}
		var buf bytes.Buffer
		var mu sync.Mutex
		var observed []string
		e := &Executor{
			Targets: Targets{
				Clients: []Client{c1, c2, c3},
				Servers: []Server{s1, s2},
				Clocks:  []ClockServer{s1},
				Cannot:  map[Kind]string{ClientHostLoss: "no fault proxy on this path"},
			},
			Recorder: check.NewRecorder(&buf),
			Observe: func(ev check.Event) {
				mu.Lock()
				defer mu.Unlock()
				observed = append(observed, fmt.Sprintf("%s %d", ev.Type, ev.ID))
			},
		}
		out, err := e.Run(t.Context(), s)
		if err == nil || !strings.Contains(err.Error(), "no such process") {
			t.Fatalf("Run = %v, want fault 8's failure", err)
		}

		want := []string{
			"0s pause s1", "100ms pause c1", "300ms resume c1", "500ms unpause s1",
			"800ms shift s1 6s", "1s shift s1 0s",
			"1.2s kill s2", "1.6s restarted s2", "1.6s pause s1", "1.7s unpause s1",
		}
		if !slices.Equal(log.calls, want) {
			t.Errorf("calls\n%q\nwant\n%q", log.calls, want)
		}
		wantObserved := []string{"start 1", "start 2", "end 2", "end 1", "start 3", "skip 4", "end 3", "start 5", "skip 7", "fault-failed 8", "start 6", "end 5", "end 6"}
		slices.Sort(observed) // goroutines at one instant may record in any order
		slices.Sort(wantObserved)
		if !slices.Equal(observed, wantObserved) {
			t.Errorf("observed %q, want %q", observed, wantObserved)
		}

		h := readHistory(t, &buf)
		var applied []int64
		for _, f := range h.Faults {
			applied = append(applied, f.ID)
			if f.To <= f.From {
				t.Errorf("fault %d ends at %d, not after its start %d", f.ID, f.To, f.From)
			}
		}
		if !slices.Equal(applied, []int64{1, 2, 3, 5, 6}) {
			t.Errorf("applied faults %v in order of start, want [1 2 3 5 6]", applied)
		}
		if len(h.Skipped) != 2 || h.Skipped[0].ID != 4 || !strings.Contains(h.Skipped[0].Error, "not supported") ||
			h.Skipped[1].ID != 7 || h.Skipped[1].Error != "no fault proxy on this path" {
			t.Errorf("skipped %+v", h.Skipped)
		}
		if len(h.Failed) != 1 || h.Failed[0].ID != 8 {
			t.Errorf("failed %+v", h.Failed)
		}
		if f := h.Faults[2].Fault; f.Kind != string(ClockStep) || f.Target != "s1" || f.StepNS != int64(6*time.Second) {
			t.Errorf("clock step recorded as %+v", f)
		}
		// Fault 6 waited for fault 5's restart on the servers' lane.
		if out[5].Start < out[4].End || !out[5].Applied {
			t.Errorf("fault 6 started at %d, before fault 5 ended at %d", out[5].Start, out[4].End)
		}
		if out[3].Skipped == "" || out[6].Skipped == "" || out[7].Err == "" || out[4].Target != "s2" {
			t.Errorf("outcomes %+v", out)
		}
	})
}

// TestExecutorCancel: when the run's ctx ends, the fault in effect is
// healed at once and later ones never start.
func TestExecutorCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &fakeLog{begin: time.Now()}
		s1 := &fakeServer{name: "s1", log: log}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var buf bytes.Buffer
		e := &Executor{
			Targets:  Targets{Servers: []Server{s1}},
			Recorder: check.NewRecorder(&buf),
			Observe: func(ev check.Event) {
				if ev.Type == check.Start {
					go func() { time.Sleep(time.Second); cancel() }()
				}
			},
		}
		out, err := e.Run(ctx, Schedule{Faults: []Fault{
			{ID: 1, Kind: ServerPause, Start: time.Second, Duration: time.Hour, Server: 1},
			{ID: 2, Kind: ServerKill, Start: 2 * time.Hour, Duration: time.Second, Server: 1},
		}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want canceled", err)
		}
		if !slices.Equal(log.calls, []string{"1s pause s1", "2s unpause s1"}) {
			t.Errorf("calls %q", log.calls)
		}
		if !out[0].Applied || out[0].End == 0 || out[1].Skipped != NotReached {
			t.Errorf("outcomes %+v", out)
		}
		if h := readHistory(t, &buf); len(h.Faults) != 1 || len(h.Events) != 2 || h.Events[1].Type != check.End {
			t.Errorf("history %+v", h.Events)
		}
	})
}

// TestExecutorHealFails: a restart that fails is recorded on the fault's
// end and returned.
func TestExecutorHealFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s1 := &fakeServer{name: "s1", log: &fakeLog{begin: time.Now()}, restartErr: errors.New("address in use")}
		var buf bytes.Buffer
		e := &Executor{Targets: Targets{Servers: []Server{s1}}, Recorder: check.NewRecorder(&buf)}
		out, err := e.Run(t.Context(), Schedule{Faults: []Fault{{ID: 1, Kind: ServerKill, Duration: time.Second, Server: 1}}})
		if err == nil || !strings.Contains(err.Error(), "address in use") || !strings.Contains(out[0].Err, "healing") {
			t.Fatalf("Run = %v, outcome %+v", err, out[0])
		}
		h := readHistory(t, &buf)
		if len(h.Events) != 2 || h.Events[1].Type != check.End || !strings.Contains(h.Events[1].Error, "address in use") {
			t.Errorf("history %+v", h.Events)
		}
	})
}

func TestExecutorBadSchedule(t *testing.T) {
	e := &Executor{Recorder: check.NewRecorder(&bytes.Buffer{})}
	if _, err := e.Run(t.Context(), Schedule{Faults: []Fault{{ID: 1, Kind: ClientPause, Client: 1, Duration: time.Second}}}); err == nil {
		t.Error("a schedule naming a client the run does not have ran")
	}
	if _, err := (&Executor{}).Run(t.Context(), Schedule{}); err == nil {
		t.Error("an executor without a recorder ran")
	}
}

// TestExecutorAimsAtTheHolder: with Targets.Holder, a client fault
// strikes the client holding the lock at its start instead of the
// scheduled one, unless another fault acts on the holder then; the
// outcome and the history name the client struck.
func TestExecutorAimsAtTheHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &fakeLog{begin: time.Now()}
		c1 := &fakeClient{name: "c1", log: log}
		c2 := &fakeClient{name: "c2", log: log}
		c3 := &fakeClient{name: "c3", log: log}
		ms := time.Millisecond
		s := Schedule{Faults: []Fault{
			{ID: 1, Kind: ClientPause, Start: 0, Duration: 300 * ms, Client: 1},                                   // aimed at c2
			{ID: 2, Kind: ClientHostLoss, Start: 100 * ms, Duration: 100 * ms, Client: 3},                         // c2 is busy: stays on c3
			{ID: 3, Kind: ClientPartition, Start: 500 * ms, Duration: 100 * ms, Client: 1, Direction: FromServer}, // no holder: c1
		}}
		var mu sync.Mutex
		holder := 2
		var buf bytes.Buffer
		e := &Executor{
			Targets: Targets{
				Clients: []Client{c1, c2, c3},
				Holder: func() (int, bool) {
					mu.Lock()
					defer mu.Unlock()
					return holder, holder > 0
				},
			},
			Recorder: check.NewRecorder(&buf),
			Observe: func(ev check.Event) {
				if ev.Type == check.End && ev.ID == 2 {
					mu.Lock()
					holder = 0
					mu.Unlock()
				}
			},
		}
		out, err := e.Run(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"0s pause c2", "100ms lose-host c3", "200ms restore-host c3", "300ms resume c2", "500ms partition c1 from-server", "600ms heal c1"}
		if !slices.Equal(log.calls, want) {
			t.Errorf("calls\n%q\nwant\n%q", log.calls, want)
		}
		if out[0].Target != "c2" || !out[0].Aimed || out[1].Target != "c3" || out[1].Aimed || out[2].Target != "c1" || out[2].Aimed {
			t.Errorf("outcomes %+v", out)
		}
		h := readHistory(t, &buf)
		if len(h.Faults) != 3 || h.Faults[0].Fault.Target != "c2" || h.Faults[2].Fault.Direction != string(FromServer) {
			t.Errorf("history faults %+v", h.Faults)
		}
	})
}
