package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/locktable"
)

// tableBackend serves the API from a real lock table.
type tableBackend struct{ t *locktable.Table }

func (b tableBackend) Locks(match func(string) bool) []locktable.Lock { return b.t.Snapshot(match) }
func (b tableBackend) Lock(name string) (locktable.Lock, bool)        { return b.t.Lookup(name) }
func (b tableBackend) ForceRelease(name string) (uint64, error)       { return b.t.ForceRelease(name) }
func (b tableBackend) Kick(name, remote string) error                 { return b.t.Kick(name, remote) }

// notes records what the table told one claim.
type notes struct {
	mu       sync.Mutex
	promoted []uint64
	ended    []locktable.Reason
}

func (n *notes) Promoted(token uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.promoted = append(n.promoted, token)
}

func (n *notes) Ended(r locktable.Reason) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ended = append(n.ended, r)
}

func (n *notes) get() ([]uint64, []locktable.Reason) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]uint64(nil), n.promoted...), append([]locktable.Reason(nil), n.ended...)
}

type fixture struct {
	table *locktable.Table
	srv   *httptest.Server
	logs  *bytes.Buffer
	port  int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{table: locktable.New(locktable.Config{}), logs: &bytes.Buffer{}, port: 40000}
	info := func() Info {
		c := f.table.Counts()
		return Info{Version: "test", UptimeMS: 1234, Config: Config{Listen: "127.0.0.1:7070", IOTimeoutMS: 5000}, Locks: c.Locks, Sessions: 7}
	}
	log := slog.New(slog.NewTextHandler(&syncWriter{w: f.logs}, nil))
	f.srv = httptest.NewServer(NewHandler(tableBackend{f.table}, info, log))
	t.Cleanup(f.srv.Close)
	return f
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// claim enters a claim for name with a long lease and returns its address,
// token (0 while waiting) and notes.
func (f *fixture) claim(t *testing.T, name, identity string) (remote string, token uint64, n *notes) {
	t.Helper()
	f.port++
	n = &notes{}
	remote = fmt.Sprintf("127.0.0.1:%d", f.port)
	c := &locktable.Claim{Session: uint64(f.port), Name: name, Identity: identity, RemoteAddr: remote, Lease: time.Hour, Notifier: n}
	token, _, err := f.table.Acquire(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.table.Release(c, locktable.Graceful) })
	return remote, token, n
}

func (f *fixture) do(t *testing.T, method, path string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q", method, path, ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, body)
		}
	}
	return resp.StatusCode
}

func lockPath(name string) string { return "/api/locks/" + url.PathEscape(name) }

func TestInfo(t *testing.T) {
	f := newFixture(t)
	f.claim(t, "a", "")
	f.claim(t, "a", "")
	var raw map[string]any
	if code := f.do(t, "GET", "/api/info", &raw); code != 200 {
		t.Fatalf("status %d", code)
	}
	want := map[string]any{
		"version": "test", "uptime_ms": 1234.0,
		"config": map[string]any{
			"listen": "127.0.0.1:7070", "ops_listen": "", "tls": false, "mtls": false,
			"acl_file": "", "audit_log": "", "io_timeout_ms": 5000.0,
		},
		"locks": 1.0, "sessions": 7.0,
	}
	if !reflect.DeepEqual(raw, want) {
		t.Fatalf("got %v\nwant %v", raw, want)
	}
}

func TestListAndMatch(t *testing.T) {
	f := newFixture(t)
	var empty map[string]any
	if code := f.do(t, "GET", "/api/locks", &empty); code != 200 || !reflect.DeepEqual(empty, map[string]any{"locks": []any{}}) {
		t.Fatalf("empty list: %d %v", code, empty)
	}
	f.claim(t, "jobs/nightly", "spiffe://x/batch")
	f.claim(t, "jobs/nightly", "")
	f.claim(t, "jobs/nightly", "")
	f.claim(t, "jobs/hourly", "")
	f.claim(t, "db", "")
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"db", "jobs/hourly", "jobs/nightly"}},
		{"?match=" + url.QueryEscape("jobs/*"), []string{"jobs/hourly", "jobs/nightly"}},
		{"?match=*ly", []string{"jobs/hourly", "jobs/nightly"}},
		{"?match=d?", []string{"db"}},
		{"?match=d", nil},
		{"?match=", []string{"db", "jobs/hourly", "jobs/nightly"}},
	}
	for _, tt := range tests {
		var got LockList
		if code := f.do(t, "GET", "/api/locks"+tt.query, &got); code != 200 {
			t.Fatalf("%s: status %d", tt.query, code)
		}
		var names []string
		for _, l := range got.Locks {
			names = append(names, l.Name)
		}
		if !reflect.DeepEqual(names, tt.want) {
			t.Errorf("%q: names %v, want %v", tt.query, names, tt.want)
		}
	}
	var all LockList
	f.do(t, "GET", "/api/locks?match=jobs/nightly", &all)
	if len(all.Locks) != 1 || len(all.Locks[0].Waiters) != 2 || all.Locks[0].Holder == nil || all.Locks[0].Holder.Identity != "spiffe://x/batch" {
		t.Fatalf("entry %+v", all.Locks)
	}
	// An entry of the list is the detail of its lock.
	var one Lock
	f.do(t, "GET", lockPath("jobs/nightly"), &one)
	if !reflect.DeepEqual(all.Locks[0], one) {
		t.Fatalf("list entry %+v differs from the detail %+v", all.Locks[0], one)
	}
}

func TestDetail(t *testing.T) {
	f := newFixture(t)
	const name = "jobs/nightly"
	before := time.Now()
	holderAddr, token, _ := f.claim(t, name, "spiffe://example.org/batch")
	w1, _, _ := f.claim(t, name, "w1.example")
	w2, _, _ := f.claim(t, name, "")

	var raw map[string]any
	if code := f.do(t, "GET", lockPath(name), &raw); code != 200 {
		t.Fatalf("status %d: %v", code, raw)
	}
	h := raw["holder"].(map[string]any)
	if h["identity"] != "spiffe://example.org/batch" || h["remote_addr"] != holderAddr || h["lease_ms"] != 3600000.0 || h["token"] != float64(token) || raw["name"] != name {
		t.Fatalf("holder %v", raw)
	}
	since, err := time.Parse(time.RFC3339Nano, h["since"].(string))
	if err != nil || !strings.HasSuffix(h["since"].(string), "Z") || since.Before(before.Add(-time.Second)) {
		t.Fatalf("since %v: %v", h["since"], err)
	}
	ws := raw["waiters"].([]any)
	if len(ws) != 2 {
		t.Fatalf("waiters %v", ws)
	}
	for i, want := range []struct{ id, addr string }{{"w1.example", w1}, {"", w2}} {
		w := ws[i].(map[string]any)
		if w["identity"] != want.id || w["remote_addr"] != want.addr || len(w) != 3 {
			t.Errorf("waiter %d: %v, want %+v", i, w, want)
		}
		if _, err := time.Parse(time.RFC3339Nano, w["queued_at"].(string)); err != nil {
			t.Errorf("waiter %d queued_at: %v", i, err)
		}
	}
	if len(h) != 5 || len(raw) != 3 {
		t.Fatalf("unexpected fields in %v", raw)
	}
}

func TestAwkwardNamesRoundTrip(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"a/b/c", "a%2Fb", ".", "..", "with space", "?q=1&x#frag", "Ünïcode ✓", "a//b", "/lead", "trail/", "waiters", "release"} {
		f.claim(t, name, "")
		var d Lock
		if code := f.do(t, "GET", lockPath(name), &d); code != 200 || d.Name != name || d.Holder == nil {
			t.Errorf("GET %q: %d %+v", name, code, d)
		}
		var rel Released
		if code := f.do(t, "POST", lockPath(name)+"/release", &rel); code != 200 || !rel.Released {
			t.Errorf("release %q: %d %+v", name, code, rel)
		}
	}
}

func TestDetailErrors(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		path string
		code int
	}{
		{lockPath("idle"), 404},
		{"/api/locks/%FF", 400},                         // not UTF-8
		{"/api/locks/" + strings.Repeat("x", 256), 400}, // too long
		{"/api/locks/", 400},                            // empty name
		{"/api/locks/a/unknown", 404},                   // unknown sub-resource
		{"/api/locks/a/waiters", 404},                   // waiter address missing
		{"/api/locks/a/waiters/1.2.3.4:5/extra", 404},   // too deep
		{"/api/nothing", 404},
	}
	for _, tt := range tests {
		var e Error
		if code := f.do(t, "GET", tt.path, &e); code != tt.code || e.Error == "" {
			t.Errorf("GET %s = %d %+v, want %d with an error message", tt.path, code, e, tt.code)
		}
	}
}

func TestForceRelease(t *testing.T) {
	f := newFixture(t)
	_, token, owner := f.claim(t, "jobs/x", "")
	_, _, next := f.claim(t, "jobs/x", "")
	_, _, last := f.claim(t, "jobs/x", "")

	var rel Released
	if code := f.do(t, "POST", lockPath("jobs/x")+"/release", &rel); code != 200 || rel != (Released{true, token}) {
		t.Fatalf("release: %d %+v, want token %d", code, rel, token)
	}
	if _, ended := owner.get(); !reflect.DeepEqual(ended, []locktable.Reason{locktable.Force}) {
		t.Fatalf("owner ended %v, want [force]", ended)
	}
	promoted, _ := next.get()
	if len(promoted) != 1 || promoted[0] <= token {
		t.Fatalf("next waiter promoted %v, want one token > %d", promoted, token)
	}
	if p, e := last.get(); len(p)+len(e) != 0 {
		t.Fatalf("the last waiter was touched: %v %v", p, e)
	}
	if !strings.Contains(f.logs.String(), "force-release") {
		t.Fatalf("no log line for the force-release: %s", f.logs)
	}

	var e Error
	if code := f.do(t, "POST", lockPath("idle")+"/release", &e); code != 404 || e.Error == "" {
		t.Fatalf("release of an idle lock: %d %+v", code, e)
	}
}

func TestKick(t *testing.T) {
	f := newFixture(t)
	f.claim(t, "q", "")
	a, _, na := f.claim(t, "q", "")
	b, _, nb := f.claim(t, "q", "")
	c, _, nc := f.claim(t, "q", "")

	var k Kicked
	if code := f.do(t, "DELETE", lockPath("q")+"/waiters/"+url.PathEscape(b), &k); code != 200 || !k.Kicked {
		t.Fatalf("kick: %d %+v", code, k)
	}
	if _, e := nb.get(); !reflect.DeepEqual(e, []locktable.Reason{locktable.Force}) {
		t.Fatalf("kicked waiter ended %v", e)
	}
	for _, n := range []*notes{na, nc} {
		if p, e := n.get(); len(p)+len(e) != 0 {
			t.Fatalf("another waiter was touched: %v %v", p, e)
		}
	}
	var d Lock
	f.do(t, "GET", lockPath("q"), &d)
	if len(d.Waiters) != 2 || d.Waiters[0].RemoteAddr != a || d.Waiters[1].RemoteAddr != c {
		t.Fatalf("queue after kick: %+v, want [%s %s]", d.Waiters, a, c)
	}

	var e Error
	if code := f.do(t, "DELETE", lockPath("q")+"/waiters/"+url.PathEscape(b), &e); code != 404 || e.Error == "" {
		t.Fatalf("second kick: %d %+v", code, e)
	}
	if code := f.do(t, "DELETE", lockPath("idle")+"/waiters/127.0.0.1:1", &e); code != 404 {
		t.Fatalf("kick on an idle lock: %d", code)
	}
	// An IPv6 address with brackets, escaped or not.
	if code := f.do(t, "DELETE", lockPath("q")+"/waiters/"+url.PathEscape("[::1]:80"), &e); code != 404 {
		t.Fatalf("kick of an unknown IPv6 waiter: %d", code)
	}
}

func TestMethods(t *testing.T) {
	f := newFixture(t)
	tests := []struct{ method, path, allow string }{
		{"POST", "/api/info", "GET"},
		{"DELETE", "/api/locks", "GET"},
		{"POST", lockPath("a"), "GET"},
		{"GET", lockPath("a") + "/release", "POST"},
		{"POST", lockPath("a") + "/waiters/127.0.0.1:1", "DELETE"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, f.srv.URL+tt.path, nil)
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != tt.allow {
			t.Errorf("%s %s = %d Allow %q, want 405 Allow %q", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Allow"), tt.allow)
		}
	}
}
