package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func enqueue(t *testing.T, l *Log, e Event) {
	t.Helper()
	if !l.Enqueue(e) {
		t.Fatalf("event %+v not queued", e)
	}
}

// closeLog closes l, which writes everything queued first.
func closeLog(t *testing.T, l *Log) {
	t.Helper()
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEventFields(t *testing.T) {
	at := time.Date(2026, 11, 30, 4, 5, 6, 7, time.FixedZone("CET", 3600))
	base := Event{Time: at, Lock: "jobs/nightly", Identity: "spiffe://x/y", RemoteAddr: "127.0.0.1:5555"}
	common := map[string]any{
		"time": "2026-11-30T03:05:06.000000007Z", "lock": "jobs/nightly",
		"identity": "spiffe://x/y", "remote_addr": "127.0.0.1:5555",
	}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range common {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	ev := func(mod func(*Event)) Event { e := base; mod(&e); return e }
	tests := []struct {
		name string
		e    Event
		want map[string]any
	}{
		{"granted with zero wait", ev(func(e *Event) { e.Kind, e.Token = Granted, 42 }),
			with("event", "granted", "token", 42.0, "wait_ms", 0.0)},
		{"granted after a wait", ev(func(e *Event) { e.Kind, e.Token, e.Wait, e.Held = Granted, 43, 1500*time.Millisecond, time.Hour }),
			with("event", "granted", "token", 43.0, "wait_ms", 1500.0)},
		{"released", ev(func(e *Event) { e.Kind, e.Token, e.Held, e.Reason = Released, 42, 2*time.Second, ReasonExpired }),
			with("event", "released", "token", 42.0, "held_ms", 2000.0, "reason", "expired")},
		{"denied carries no token", ev(func(e *Event) { e.Kind, e.Token = Denied, 9 }),
			with("event", "denied")},
		{"force_release", ev(func(e *Event) { e.Kind, e.Token = ForceRelease, 42 }),
			with("event", "force_release", "token", 42.0)},
		{"kick_waiter", ev(func(e *Event) { e.Kind, e.Reason = KickWaiter, "ignored" }),
			with("event", "kick_waiter")},
		{"empty identity is kept", Event{Time: at, Kind: Denied, Lock: "a", RemoteAddr: "[::1]:1"},
			map[string]any{"time": "2026-11-30T03:05:06.000000007Z", "event": "denied", "lock": "a", "identity": "", "remote_addr": "[::1]:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := appendLine(nil, tt.e)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(line), "\n"); n != 1 || line[len(line)-1] != '\n' {
				t.Fatalf("line %q is not exactly one line", line)
			}
			var got map[string]any
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestEventFieldOrderIsStable(t *testing.T) {
	line, err := appendLine(nil, Event{Time: time.Unix(0, 0), Kind: Released, Lock: "a", Token: 1, Reason: ReasonForce})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"time":"1970-01-01T00:00:00.000000000Z","event":"released","lock":"a","identity":"","remote_addr":"","token":1,"held_ms":0,"reason":"force"}` + "\n"
	if string(line) != want {
		t.Fatalf("got  %s want %s", line, want)
	}
}

func TestRefusesMalformedEvents(t *testing.T) {
	for _, e := range []Event{{Kind: "grant"}, {Kind: ""}, {Kind: Released, Token: 1}} {
		if _, err := appendLine(nil, e); err == nil {
			t.Errorf("appendLine(%+v) succeeded", e)
		}
	}
}

func TestWriteStampsTimeAndAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(`{"event":"from a previous run"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	if l.Path() != path {
		t.Fatalf("Path() = %q", l.Path())
	}
	before := time.Now()
	enqueue(t, l, Event{Kind: Denied, Lock: "a"})
	closeLog(t, l)
	lines := readLines(t, path)
	if len(lines) != 2 || lines[0]["event"] != "from a previous run" {
		t.Fatalf("the log was not appended to: %v", lines)
	}
	ts, err := time.Parse(time.RFC3339Nano, lines[1]["time"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if ts.Before(before.Add(-time.Second)) || ts.After(time.Now().Add(time.Second)) || ts.Location() != time.UTC {
		t.Fatalf("time %v is not a UTC stamp of now", ts)
	}
}

func TestReopenFollowsRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	l, err := Open(path, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	enqueue(t, l, Event{Kind: Denied, Lock: "before"})
	rotated := filepath.Join(dir, "audit.log.1")
	if err := os.Rename(path, rotated); err != nil {
		t.Fatal(err)
	}
	// Until the reopen, lines keep going to the renamed file.
	enqueue(t, l, Event{Kind: Denied, Lock: "between"})
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	enqueue(t, l, Event{Kind: Denied, Lock: "after"})
	closeLog(t, l)
	old, cur := readLines(t, rotated), readLines(t, path)
	if len(old) != 2 || old[0]["lock"] != "before" || old[1]["lock"] != "between" {
		t.Fatalf("rotated file: %v", old)
	}
	if len(cur) != 1 || cur[0]["lock"] != "after" {
		t.Fatalf("new file: %v", cur)
	}
}

func TestFailedReopenKeepsWriting(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "logs")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, "audit.log")
	l, err := Open(path, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	// Move the whole directory away: the path can no longer be created.
	moved := filepath.Join(dir, "moved")
	if err := os.Rename(sub, moved); err != nil {
		t.Fatal(err)
	}
	if err := l.Reopen(); err == nil {
		t.Fatal("Reopen succeeded on a path whose directory is gone")
	}
	enqueue(t, l, Event{Kind: Denied, Lock: "still"})
	closeLog(t, l)
	if lines := readLines(t, filepath.Join(moved, "audit.log")); len(lines) != 1 || lines[0]["lock"] != "still" {
		t.Fatalf("after a failed reopen the old file got %v", lines)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "no", "such", "dir", "audit.log"), 0, nil); err == nil {
		t.Fatal("Open succeeded in a missing directory")
	}
}

func TestWriteAfterCloseFails(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "audit.log"), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	closeLog(t, l)
	if l.Enqueue(Event{Kind: Denied}) {
		t.Fatal("Enqueue after Close queued the event")
	}
	if err := l.Reopen(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Reopen after Close = %v, want ErrClosed", err)
	}
	closeLog(t, l)
	if l.Dropped() != 0 {
		t.Fatalf("Dropped = %d after Close; closing drops nothing", l.Dropped())
	}
}

func TestStdoutIsNotReopenedOrClosed(t *testing.T) {
	l, err := Open(Stdout, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	closeLog(t, l)
	if _, err := os.Stdout.Stat(); err != nil {
		t.Fatalf("stdout was closed: %v", err)
	}
}

func TestConcurrentWritesDoNotInterleave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if !l.Enqueue(Event{Kind: Granted, Lock: strings.Repeat("x", 100), Token: uint64(w*each + i)}) {
					t.Error("event dropped")
					return
				}
				if i == each/2 && w == 0 {
					if err := l.Reopen(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	closeLog(t, l)
	seen := map[float64]bool{}
	for _, m := range readLines(t, path) {
		seen[m["token"].(float64)] = true
	}
	if len(seen) != writers*each {
		t.Fatalf("%d distinct tokens, want %d", len(seen), writers*each)
	}
}

// stalledSink blocks every Write until release is closed; entered gets
// one value per Write call.
type stalledSink struct {
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	lines   []string
}

func (s *stalledSink) Write(p []byte) (int, error) {
	s.entered <- struct{}{}
	<-s.release
	s.mu.Lock()
	s.lines = append(s.lines, string(p))
	s.mu.Unlock()
	return len(p), nil
}

// TestStalledSinkDropsAndCounts: while the sink blocks, Enqueue never
// waits: the queue takes its capacity, further events are dropped and
// counted; once the sink moves, the queued events are written in order.
func TestStalledSinkDropsAndCounts(t *testing.T) {
	sink := &stalledSink{entered: make(chan struct{}, 16), release: make(chan struct{})}
	var reports []error
	l := start("stalled", sink, nil, 2, func(err error) { reports = append(reports, err) })
	enqueue(t, l, Event{Kind: Released, Lock: "a", Token: 1, Reason: ReasonGraceful})
	<-sink.entered // the writer is stuck in the first line
	enqueue(t, l, Event{Kind: Granted, Lock: "a", Token: 2})
	enqueue(t, l, Event{Kind: Granted, Lock: "b", Token: 3})
	if l.Enqueue(Event{Kind: Granted, Lock: "c", Token: 4}) {
		t.Fatal("a full queue took an event")
	}
	if l.Dropped() != 1 || l.Queued() != 3 {
		t.Fatalf("Dropped %d, Queued %d; want 1 and 3 (two waiting, one being written)", l.Dropped(), l.Queued())
	}
	close(sink.release)
	closeLog(t, l)
	if len(sink.lines) != 3 || len(reports) != 3 {
		t.Fatalf("wrote %d lines with %d reports, want 3", len(sink.lines), len(reports))
	}
	for i, want := range []string{`"event":"released","lock":"a"`, `"event":"granted","lock":"a"`, `"event":"granted","lock":"b"`} {
		if !strings.Contains(sink.lines[i], want) || reports[i] != nil {
			t.Errorf("line %d = %s (report %v), want %s", i, sink.lines[i], reports[i], want)
		}
	}
}

// TestCloseGivesUpOnAStalledSink: Close returns when its context ends even
// if the sink never moves.
func TestCloseGivesUpOnAStalledSink(t *testing.T) {
	sink := &stalledSink{entered: make(chan struct{}, 16), release: make(chan struct{})}
	defer close(sink.release)
	l := start("stalled", sink, nil, 2, nil)
	enqueue(t, l, Event{Kind: Denied, Lock: "a"})
	<-sink.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v, want context.Canceled", err)
	}
}
