package server_test

// The contract of the public docs page operations/audit.md: the example
// line and the fields of every event, the released-before-granted order,
// and (not in the docs; this project's choice, documented in
// server.Config.AuditLog and the README) what a stalled audit sink does:
// locks keep being granted, overflowing events are dropped and counted in
// monolock_audit_dropped_total.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// auditLine is the documented shape of one audit line: the common fields
// and, as pointers, the extra fields of each event type.
type auditLine struct {
	Time       string  `json:"time"`
	Event      string  `json:"event"`
	Lock       string  `json:"lock"`
	Identity   string  `json:"identity"`
	RemoteAddr string  `json:"remote_addr"`
	Token      *uint64 `json:"token"`
	WaitMS     *int64  `json:"wait_ms"`
	HeldMS     *int64  `json:"held_ms"`
	Reason     *string `json:"reason"`
}

// check fails unless the line has exactly the documented fields of its
// event and a UTC RFC 3339 time.
func (l auditLine) check(t *testing.T) {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, l.Time)
	if err != nil || !strings.HasSuffix(l.Time, "Z") || ts.Location() != time.UTC {
		t.Errorf("%s: time %q is not UTC RFC 3339: %v", l.Event, l.Time, err)
	}
	has := fmt.Sprint(l.Token != nil, l.WaitMS != nil, l.HeldMS != nil, l.Reason != nil)
	want := map[string]string{
		"granted":       "true true false false",
		"released":      "true false true true",
		"denied":        "false false false false",
		"force_release": "true false false false",
		"kick_waiter":   "false false false false",
	}[l.Event]
	if want == "" || has != want {
		t.Errorf("event %q has token/wait_ms/held_ms/reason = %s, want %s", l.Event, has, want)
	}
	if l.Reason != nil && !strings.Contains(" graceful expired io_timeout force ", " "+*l.Reason+" ") {
		t.Errorf("released reason %q is not one of the documented reasons", *l.Reason)
	}
}

func decodeAuditLines(t *testing.T, data []byte) []auditLine {
	t.Helper()
	var out []auditLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var l auditLine
		decodeStrict(t, sc.Bytes(), &l)
		out = append(out, l)
	}
	return out
}

func TestDocsAuditExampleLine(t *testing.T) {
	const doc = `{"time":"2026-08-08T12:00:00Z","event":"granted","lock":"nightly-import","identity":"spiffe://prod/worker/1","remote_addr":"10.0.0.5:52114","token":27262976001,"wait_ms":0}`
	lines := decodeAuditLines(t, []byte(doc))
	if len(lines) != 1 || *lines[0].Token != 27262976001 || *lines[0].WaitMS != 0 {
		t.Fatalf("decoded %+v", lines)
	}
	lines[0].check(t)
}

// TestDocsAuditEvents: a live server writes every documented event with
// exactly its documented fields, and per lock a released line before the
// next granted line.
func TestDocsAuditEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	ts := monolocktest.NewServerConfig(t, server.Config{AuditLog: path})
	owner := dial(t, ts.Addr)
	owner.acquire("nightly/import", time.Minute)
	owner.expect(protocol.TypeAcquired)
	next := dial(t, ts.Addr)
	next.acquire("nightly/import", time.Minute)
	next.expect(protocol.TypeWaiting)
	kicked := dial(t, ts.Addr)
	kicked.acquire("nightly/import", time.Minute)
	kicked.expect(protocol.TypeWaiting)
	if err := ts.Server().Kick("nightly/import", kicked.conn.LocalAddr().String()); err != nil {
		t.Fatal(err)
	}
	kicked.expectError(protocol.CodeClosedByAdmin)
	if _, err := ts.Server().ForceRelease("nightly/import"); err != nil {
		t.Fatal(err)
	}
	owner.expectError(protocol.CodeClosedByAdmin)
	next.expect(protocol.TypeAcquired)
	next.conn.Close()
	ts.Close() // writes the queue

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, l := range decodeAuditLines(t, data) {
		l.check(t)
		events = append(events, l.Event)
	}
	want := "granted kick_waiter force_release released granted released"
	if got := strings.Join(events, " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// TestAuditStalledSink: with the audit sink stalled — a pipe nobody reads,
// as a blocked stdout would be — acquisitions of other locks and the
// handover of a held lock continue; events beyond the queue are dropped
// and counted in monolock_audit_dropped_total; the lines that were written
// keep the per-lock order. The pipe is filled before the server opens it,
// so its writer blocks on its first line; no sleeps decide anything.
func TestAuditStalledSink(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "audit.pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A reader that does not read (yet): the server can open the pipe,
	// and its writes block once the pipe buffer is full.
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	filler, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	fill := bytes.Repeat([]byte("\n"), 4096)
	filled := 0
	for {
		n, err := syscall.Write(filler, fill)
		if err == syscall.EAGAIN {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		filled += n
	}
	syscall.Close(filler)
	t.Logf("pipe full after %d bytes", filled)
	ts := monolocktest.NewServerConfig(t, server.Config{AuditLog: fifo, AuditQueue: 8})
	srv := ts.Server()

	holder := dial(t, ts.Addr)
	holder.acquire("held", time.Minute)
	holder.expect(protocol.TypeAcquired)
	waiter := dial(t, ts.Addr)
	waiter.acquire("held", time.Minute)
	waiter.expect(protocol.TypeWaiting)

	const limit = 100 // the queue holds 8 events, a claim makes 2
	claims := 0
	for metric(t, srv, "monolock_audit_dropped_total") == 0 {
		if claims == limit {
			t.Fatalf("%d claims and no audit event dropped", limit)
		}
		c := dial(t, ts.Addr)
		c.acquire(fmt.Sprintf("other-%d", claims), time.Minute)
		c.expect(protocol.TypeAcquired)
		c.conn.Close()
		claims++
	}
	// The sink is stalled; locks still change hands.
	for i := range 3 {
		c := dial(t, ts.Addr)
		c.acquire(fmt.Sprintf("after-stall-%d", i), time.Minute)
		c.expect(protocol.TypeAcquired)
		c.conn.Close()
	}
	holder.conn.Close()
	waiter.expect(protocol.TypeAcquired)
	waiter.conn.Close()
	if q := metric(t, srv, "monolock_audit_queued"); q < 8 {
		t.Errorf("monolock_audit_queued = %v, want the full queue (8) and more being written", q)
	}

	// Unblock the sink and shut down: the queue is written, then the
	// pipe closes.
	read := make(chan []byte)
	go func() {
		data, _ := io.ReadAll(blocking{reader})
		read <- data
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	lines := decodeAuditLines(t, bytes.TrimLeft(<-read, "\n"))
	seen := map[string]string{} // lock → its last event
	var lastToken uint64
	for _, l := range lines {
		l.check(t)
		if l.Event == "granted" {
			if *l.Token <= lastToken {
				t.Fatalf("granted token %d after %d: lines out of order", *l.Token, lastToken)
			}
			lastToken = *l.Token
			if seen[l.Lock] == "granted" {
				t.Fatalf("%s granted twice without a released line between", l.Lock)
			}
		}
		seen[l.Lock] = l.Event
	}
	if len(lines) == 0 {
		t.Fatal("nothing was written")
	}
}

// blocking reads a non-blocking pipe, waiting while it is empty but open.
type blocking struct{ f *os.File }

func (b blocking) Read(p []byte) (int, error) {
	for {
		n, err := b.f.Read(p)
		if pe, ok := err.(*os.PathError); ok && pe.Err == syscall.EAGAIN {
			time.Sleep(time.Millisecond)
			continue
		}
		return n, err
	}
}
