package check

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// childEnv makes the test binary a child process that records a few
// events into the file it names.
const childEnv = "MONOLOCK_BENCH_CHECK_TEST_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		rec, err := Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		c := rec.Client("child")
		inv := c.Invoke(Acquire, Event{})
		inv.OK(Event{Token: Ptr(uint64(9))})
		c.Lost()
		if err := rec.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRecordAcrossProcesses records in the parent, then in a child
// process writing its own file, then in the parent again: merged by
// CLOCK_MONOTONIC, the child's events fall between the parent's.
func TestRecordAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	parentPath, childPath := filepath.Join(dir, "parent.jsonl"), filepath.Join(dir, "child.jsonl")
	rec, err := Create(parentPath)
	if err != nil {
		t.Fatal(err)
	}
	p := rec.Client("parent")
	before := p.Invoke(Read, Event{Store: StoreUnfenced})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+childPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	before.OK(Event{Value: Ptr("")})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	pf, err := os.Open(parentPath)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	cf, err := os.Open(childPath)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	h, err := Merge(pf, cf)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, e := range h.Events {
		order = append(order, e.Process+":"+string(e.Type))
	}
	want := "parent:invoke child:invoke child:ok child:notice parent:ok"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("merged order %q, want %q", got, want)
	}
	if holds := Holds(h); len(holds) != 1 || *holds[0].Token != 9 || holds[0].Ended != EndedLost {
		t.Errorf("holds = %+v, want the child's hold ended by its notice", holds)
	}
}

// TestRecorderConcurrent records from many goroutines at once: every line
// is whole, in time order, and every operation pairs.
func TestRecorderConcurrent(t *testing.T) {
	var buf bytes.Buffer
	rec := NewRecorder(&buf)
	const clients, ops = 8, 50
	var wg sync.WaitGroup
	for i := range clients {
		c := rec.Client(fmt.Sprintf("c%d", i+1))
		wg.Go(func() {
			for j := range ops {
				inv := c.Invoke(Write, Event{Store: StoreFenced, Value: Ptr(fmt.Sprintf("c%d-%d", i+1, j)), Token: Ptr(uint64(j))})
				inv.OK(Event{Accepted: Ptr(true)})
			}
		})
		wg.Go(func() { c.Lost() }) // a watcher beside the loop
	}
	wg.Wait()
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}
	events, err := readEvents(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(events); i++ {
		if events[i].T < events[i-1].T {
			t.Fatalf("line %d goes back in time: %d < %d", i+1, events[i].T, events[i-1].T)
		}
	}
	h, err := NewHistory(events)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Ops) != clients*ops || len(h.Notices) != clients {
		t.Fatalf("%d operations and %d notices, want %d and %d", len(h.Ops), len(h.Notices), clients*ops, clients)
	}
	for _, o := range h.Ops {
		if o.Done == nil || !o.Accepted() {
			t.Fatalf("operation %+v did not pair", o)
		}
	}
}

// TestRoundTrip writes a history and reads it back unchanged.
func TestRoundTrip(t *testing.T) {
	b := newBuilder()
	b.acquire("c1", 1, 2, 3)
	b.write("c1", StoreFenced, "v", 3, 3, 4, OK, true)
	b.inc("c1", StoreUnfenced, 3, 5, 6, Info, 4, false)
	b.fault(1, "clock-step", "redis", 7, 8)
	b.lost("c1", 9)
	h := b.history(t)
	var buf bytes.Buffer
	if err := h.Write(&buf); err != nil {
		t.Fatal(err)
	}
	again, err := ReadHistory(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Events, h.Events) {
		t.Errorf("round trip changed the history:\n%v\n%v", h.Events, again.Events)
	}
	if len(again.Faults) != 1 || again.Faults[0].To != 8*ms {
		t.Errorf("faults = %+v", again.Faults)
	}
}

// TestBadHistories: every break of the format is an error that says
// where, never a silent zero.
func TestBadHistories(t *testing.T) {
	tests := []struct{ name, lines, want string }{
		{"completion without invocation", `{"t":1,"process":"c1","type":"ok","f":"acquire","id":1}`, "without its invocation"},
		{"invoked twice", `{"t":1,"process":"c1","type":"invoke","f":"acquire","id":1}
{"t":2,"process":"c1","type":"invoke","f":"acquire","id":1}`, "twice"},
		{"completed twice", `{"t":1,"process":"c1","type":"invoke","f":"acquire","id":1}
{"t":2,"process":"c1","type":"ok","f":"acquire","id":1}
{"t":3,"process":"c1","type":"fail","f":"acquire","id":1}`, "completed twice"},
		{"other function", `{"t":1,"process":"c1","type":"invoke","f":"acquire","id":1}
{"t":2,"process":"c1","type":"ok","f":"release","id":1}`, "invoked as acquire"},
		{"unknown field", `{"t":1,"process":"c1","type":"invoke","f":"acquire","id":1,"tokn":3}`, "unknown field"},
		{"unknown type", `{"t":1,"process":"c1","type":"done","f":"acquire","id":1}`, "unknown type"},
		{"no time", `{"process":"c1","type":"invoke","f":"acquire","id":1}`, "CLOCK_MONOTONIC"},
		{"no id", `{"t":1,"process":"c1","type":"invoke","f":"acquire"}`, "id 0"},
		{"write without value", `{"t":1,"process":"c1","type":"invoke","f":"write","id":1,"store":"fenced"}`, "without a value"},
		{"write ok without accepted", `{"t":1,"process":"c1","type":"invoke","f":"write","id":1,"store":"fenced","value":"x"}
{"t":2,"process":"c1","type":"ok","f":"write","id":1}`, "without accepted"},
		{"read without store", `{"t":1,"process":"c1","type":"invoke","f":"read","id":1}`, "without a store"},
		{"fault without kind", `{"t":1,"process":"nemesis","type":"start","f":"fault","id":1}`, "without a fault"},
		{"fault ended twice", `{"t":1,"process":"nemesis","type":"start","f":"fault","id":1,"fault":{"kind":"server-kill"}}
{"t":2,"process":"nemesis","type":"end","f":"fault","id":1,"fault":{"kind":"server-kill"}}
{"t":3,"process":"nemesis","type":"end","f":"fault","id":1,"fault":{"kind":"server-kill"}}`, "twice"},
		{"not json", `{"t":1,`, "line 1"},
		{"write_t on a write", `{"t":1,"process":"c1","type":"invoke","f":"write","id":1,"store":"fenced","value":"x"}
{"t":3,"process":"c1","type":"ok","f":"write","id":1,"accepted":true,"write_t":2}`, "want an increment"},
		{"write_t after the completion", `{"t":1,"process":"c1","type":"invoke","f":"increment","id":1,"store":"fenced"}
{"t":3,"process":"c1","type":"ok","f":"increment","id":1,"accepted":true,"read":0,"wrote":1,"write_t":4}`, "outside its invocation"},
		{"ack_t on an operation", `{"t":1,"process":"c1","type":"invoke","f":"acquire","id":1,"ack_t":2}`, "want a fault's start or end"},
		{"ack_t before its fault line", `{"t":5,"process":"nemesis","type":"start","f":"fault","id":1,"fault":{"kind":"client-pause","target":"c1"},"ack_t":4}`, "not before it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadHistory(strings.NewReader(tt.lines))
			if err == nil || !errors.Is(err, ErrBadEvent) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want ErrBadEvent saying %q", err, tt.want)
			}
		})
	}
}

// TestRecorderErrors: a failed write and a malformed event stick, and a
// second completion is an error.
func TestRecorderErrors(t *testing.T) {
	rec := NewRecorder(failingWriter{})
	rec.Client("c1").Invoke(Acquire, Event{})
	if err := rec.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Err = %v, want the write error", err)
	}

	var buf bytes.Buffer
	rec = NewRecorder(&buf)
	if _, err := rec.Record(Event{Process: "c1", Type: Invoke, F: Write, ID: 1, Store: StoreFenced}); !errors.Is(err, ErrBadEvent) {
		t.Errorf("write without value recorded: %v", err)
	}
	if _, err := rec.Record(Event{Process: "c1", Type: Invoke, F: Acquire, ID: 2}); err == nil {
		t.Error("a record after an error was taken")
	}
	if buf.Len() != 0 {
		t.Errorf("bad events reached the file: %q", buf.String())
	}

	rec = NewRecorder(&buf)
	inv := rec.Client("c1").Invoke(Release, Event{})
	inv.OK(Event{})
	inv.Fail(errors.New("again"))
	if err := rec.Err(); !errors.Is(err, ErrBadEvent) {
		t.Errorf("second completion: Err = %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestExcerpt checks the marks, the context and the elided counts.
func TestExcerpt(t *testing.T) {
	var events []Event
	for i := range 20 {
		events = append(events, Event{T: Mono(i+1) * ms, Process: "c1", Type: Notice, F: Lost})
	}
	h, err := NewHistory(events)
	if err != nil {
		t.Fatal(err)
	}
	lines := excerpt(h, 5, 6, 15, -1)
	var got []string
	for _, l := range lines {
		s := fmt.Sprint(int(l.T / ms))
		if l.Mark {
			s += "*"
		}
		if l.Elided > 0 {
			s = fmt.Sprintf("(%d) ", l.Elided) + s
		}
		got = append(got, s)
	}
	want := "4 5 6* 7* 8 9 (4) 14 15 16* 17 18"
	if strings.Join(got, " ") != want {
		t.Errorf("excerpt %q, want %q", strings.Join(got, " "), want)
	}
}
