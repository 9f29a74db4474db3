package main

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/admin"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// replay is an admin API double that answers with the contract's JSON and
// records the requests, for front-end tests that need no lock server.
type replay struct {
	t    *testing.T
	reqs []string // "METHOD escaped-path?query"
	// answers maps "METHOD escaped-path" to status and body.
	answers map[string]struct {
		status int
		body   string
	}
}

func (rp *replay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.EscapedPath()
	q := ""
	if r.URL.RawQuery != "" {
		q = "?" + r.URL.RawQuery
	}
	rp.reqs = append(rp.reqs, key+q)
	a, ok := rp.answers[key]
	if !ok {
		a.status, a.body = http.StatusNotFound, `{"error":"no route"}`
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	w.Write([]byte(a.body))
}

func newReplay(t *testing.T, answers map[string]struct {
	status int
	body   string
}) (*replay, string) {
	rp := &replay{t: t, answers: answers}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return rp, srv.Listener.Addr().String()
}

type answer = struct {
	status int
	body   string
}

func TestAdminAgainstContractJSON(t *testing.T) {
	sinceT := time.Now().Add(-90 * time.Second)
	since := sinceT.UTC().Format(time.RFC3339Nano)
	holder := `{"identity":"spiffe://ci/deployer","remote_addr":"127.0.0.1:5555","since":"` + since + `","lease_ms":2000,"token":42}`
	waiter := `{"identity":"","remote_addr":"127.0.0.1:5556","queued_at":"` + since + `"}`
	answers := map[string]answer{
		"GET /api/locks": {200, `{"locks":[{"name":"deploy/prod","holder":` + holder + `,"waiters":[` + waiter + `,` + waiter + `]},{"name":"odd name\t1","holder":null,"waiters":[` + waiter + `]}]}`},
		"GET /api/locks/deploy%2Fprod": {200, `{"name":"deploy/prod","holder":` + holder + `,"waiters":[` +
			`{"identity":"","remote_addr":"127.0.0.1:5556","queued_at":"` + since + `"},` +
			`{"identity":"cn-x","remote_addr":"[::1]:5557","queued_at":"` + since + `"}]}`},
		"POST /api/locks/deploy%2Fprod/release":                  {200, `{"released":true,"token":42}`},
		"POST /api/locks/idle/release":                           {404, `{"error":"lock \"idle\" has no owner"}`},
		"DELETE /api/locks/deploy%2Fprod/waiters/%5B::1%5D:5557": {200, `{"kicked":true}`},
		"DELETE /api/locks/deploy%2Fprod/waiters/127.0.0.1:1":    {404, `{"error":"no such waiter"}`},
	}
	rp, addr := newReplay(t, answers)
	tests := []struct {
		name    string
		args    []string
		code    int
		request string
		want    []string // in stdout (success) or stderr (failure)
	}{
		{"locks table", []string{"locks"}, 0, "GET /api/locks",
			[]string{"NAME", "WAITERS", "deploy/prod", "127.0.0.1:5555", "spiffe://ci/deployer", "42", "2s", `"odd name\t1"`}},
		{"locks with a glob", []string{"locks", "deploy/*"}, 0, "GET /api/locks?match=deploy%2F%2A", nil},
		{"show", []string{"show", "deploy/prod"}, 0, "GET /api/locks/deploy%2Fprod",
			[]string{"lock deploy/prod", "holder", "1", "127.0.0.1:5556", "2", "[::1]:5557", "cn-x"}},
		{"release", []string{"release", "deploy/prod"}, 0, "POST /api/locks/deploy%2Fprod/release",
			[]string{"released deploy/prod (owner's token 42)"}},
		{"release of an idle lock", []string{"release", "idle"}, exitFailure, "POST /api/locks/idle/release",
			[]string{"404 Not Found", `lock "idle" has no owner`}},
		{"kick", []string{"kick", "deploy/prod", "[::1]:5557"}, 0, "DELETE /api/locks/deploy%2Fprod/waiters/%5B::1%5D:5557",
			[]string{"kicked waiter [::1]:5557 from deploy/prod"}},
		{"kick of an unknown waiter", []string{"kick", "deploy/prod", "127.0.0.1:1"}, exitFailure, "DELETE /api/locks/deploy%2Fprod/waiters/127.0.0.1:1",
			[]string{"no such waiter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rp.reqs = nil
			args := append([]string{tt.args[0], "-admin", addr}, tt.args[1:]...)
			before := time.Now()
			code, stdout, stderr := invoke(t, nil, args...)
			after := time.Now()
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.name == "locks table" {
				checkAge(t, stdout, "deploy/prod", before.Sub(sinceT), after.Sub(sinceT))
			}
			if len(rp.reqs) != 1 || rp.reqs[0] != tt.request {
				t.Fatalf("requests %q, want %q", rp.reqs, tt.request)
			}
			out := stdout
			if code != 0 {
				out = stderr
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// checkAge checks the age column (the fifth) of the table row of lock:
// the holder's age when the command ran, somewhere in [lo, hi] (rounded
// to 100ms), however long a loaded machine took to get there.
func checkAge(t *testing.T, table, lock string, lo, hi time.Duration) {
	t.Helper()
	for line := range strings.Lines(table) {
		f := strings.Fields(line)
		if len(f) < 5 || f[0] != lock {
			continue
		}
		d, err := time.ParseDuration(f[4])
		if err != nil {
			t.Fatalf("age %q of %s: %v", f[4], lock, err)
		}
		if d < lo.Round(100*time.Millisecond) || d > hi.Round(100*time.Millisecond) {
			t.Errorf("age %v of %s, want between %v and %v", d, lock, lo, hi)
		}
		return
	}
	t.Fatalf("no row for %s:\n%s", lock, table)
}

func TestAdminJSONAndAddress(t *testing.T) {
	body := `{"locks":[{"name":"a","holder":null,"waiters":[{"identity":"","remote_addr":"127.0.0.1:1","queued_at":"2026-08-08T12:00:07Z"}]}]}`
	_, addr := newReplay(t, map[string]answer{"GET /api/locks": {200, body}})
	// -admin from MONOLOCK_ADMIN_ADDR, as a URL; -json passes the server's JSON.
	code, stdout, stderr := invoke(t, map[string]string{"MONOLOCK_ADMIN_ADDR": "http://" + addr + "/"}, "locks", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got, want any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("-json output is not JSON: %v\n%s", err, stdout)
	}
	json.Unmarshal([]byte(body), &want)
	if g, _ := json.Marshal(got); string(g) != func() string { w, _ := json.Marshal(want); return string(w) }() {
		t.Fatalf("-json output %s, want %s", g, body)
	}

	// Nothing listening: a clear failure, exit 1.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	code, _, stderr = invoke(t, nil, "locks", "-admin", dead)
	if code != exitFailure || !strings.Contains(stderr, "connection refused") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// An empty list reads as such.
	_, addr = newReplay(t, map[string]answer{"GET /api/locks": {200, `{"locks":[]}`}})
	if code, stdout, _ := invoke(t, nil, "locks", "-admin", addr); code != 0 || !strings.Contains(stdout, "no locks held or awaited") {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
}

// The admin front ends end to end: a real server's admin handler, real
// clients holding and queueing.
func TestAdminEndToEnd(t *testing.T) {
	srv := monolocktest.NewServer(t)
	api := httptest.NewServer(srv.Server().AdminHandler())
	t.Cleanup(api.Close)
	adminAddr := api.Listener.Addr().String()
	c := monolock.New(monolock.Config{Address: srv.Addr})
	owner, err := c.Acquire(t.Context(), "deploy/prod", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Release()
	type acquired struct {
		l   *monolock.Lock
		err error
	}
	waiters := make([]chan acquired, 2)
	for i := range waiters {
		waiters[i] = make(chan acquired, 1)
		go func() {
			l, err := c.Acquire(t.Context(), "deploy/prod", 5*time.Second)
			waiters[i] <- acquired{l, err}
		}()
		deadline := time.Now().Add(10 * time.Second)
		for info, _ := srv.Server().Lock("deploy/prod"); len(info.Waiters) < i+1; info, _ = srv.Server().Lock("deploy/prod") {
			if time.Now().After(deadline) {
				t.Fatal("waiter never queued")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	info, _ := srv.Server().Lock("deploy/prod")
	holderAddr, first, second := info.Holder.RemoteAddr, info.Waiters[0].RemoteAddr, info.Waiters[1].RemoteAddr

	ctl := func(want int, args ...string) string {
		t.Helper()
		args = append([]string{args[0], "-admin", adminAddr}, args[1:]...)
		code, stdout, stderr := invoke(t, nil, args...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d; stderr:\n%s", args, code, want, stderr)
		}
		return stdout + stderr
	}
	contains := func(out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
	}
	tok := strconv.FormatUint(owner.Token(), 10)
	contains(ctl(0, "locks"), "deploy/prod", holderAddr, tok, "5s")
	contains(ctl(0, "locks", "deploy/*"), "deploy/prod")
	contains(ctl(0, "locks", "other/*"), "no locks held or awaited")
	out := ctl(0, "show", "deploy/prod")
	contains(out, holderAddr, first, second)
	if strings.Index(out, first) > strings.Index(out, second) {
		t.Errorf("queue out of order:\n%s", out)
	}
	var listed admin.LockList
	dec := json.NewDecoder(strings.NewReader(ctl(0, "locks", "-json")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&listed); err != nil || len(listed.Locks) != 1 || len(listed.Locks[0].Waiters) != 2 || listed.Locks[0].Waiters[0].RemoteAddr != first {
		t.Fatalf("locks -json: %+v, %v", listed, err)
	}

	// Kick the first waiter: it gets ERROR 0x02; the second keeps its place.
	contains(ctl(0, "kick", "deploy/prod", first), "kicked waiter "+first)
	if r := <-waiters[0]; !errors.Is(r.err, protocol.ErrClosedByAdmin) {
		t.Fatalf("kicked waiter's Acquire = %v, want ErrClosedByAdmin", r.err)
	}
	contains(ctl(exitFailure, "kick", "deploy/prod", first), "404")

	// Force-release: the owner loses with 0x02, the remaining waiter is promoted.
	contains(ctl(0, "release", "deploy/prod"), "released deploy/prod (owner's token "+tok+")")
	<-owner.Done()
	if !errors.Is(owner.Err(), protocol.ErrClosedByAdmin) {
		t.Fatalf("owner's Err = %v", owner.Err())
	}
	r := <-waiters[1]
	if r.err != nil {
		t.Fatalf("second waiter: %v", r.err)
	}
	defer r.l.Release()
	if r.l.Token() <= owner.Token() {
		t.Fatalf("promoted token %d not above %d", r.l.Token(), owner.Token())
	}
	contains(ctl(exitFailure, "release", "idle"), "404")
}
