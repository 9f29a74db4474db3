package server_test

// The contract of the public docs page operations/admin-api.mdx: the
// documented JSON decodes strictly (no unknown field) into the package
// admin types, and a live server answers in exactly those shapes.

import (
	"bytes"
	"encoding/json"
	"net/url"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/admin"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// The examples of the page, verbatim.
const (
	docsAdminInfo = `{
  "version": "v1.0.0",
  "uptime_ms": 86400000,
  "config": {
    "listen": "0.0.0.0:7070",
    "ops_listen": "0.0.0.0:9090",
    "tls": true,
    "mtls": true,
    "acl_file": "/etc/monolock/acl.json",
    "audit_log": "/var/log/monolock/audit.jsonl",
    "io_timeout_ms": 5000
  },
  "locks": 2,
  "sessions": 5
}`
	docsAdminLocks = `{
  "locks": [
    {
      "name": "nightly/import",
      "holder": {
        "identity": "spiffe://prod/worker/1",
        "remote_addr": "10.0.0.5:52114",
        "since": "2026-08-08T12:00:00Z",
        "lease_ms": 2000,
        "token": 27262976001
      },
      "waiters": [
        {
          "identity": "spiffe://prod/worker/2",
          "remote_addr": "10.0.0.6:41230",
          "queued_at": "2026-08-08T12:00:07Z"
        }
      ]
    }
  ]
}`
)

// decodeStrict decodes one JSON value into v, failing on a field v does
// not have and on trailing data.
func decodeStrict(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding into %T: %v in %s", v, err, data)
	}
	if dec.More() {
		t.Fatalf("trailing data after %T in %s", v, data)
	}
}

// sameJSON fails unless v encodes to the same JSON object as doc: every
// documented field round-trips with its documented type.
func sameJSON(t *testing.T, doc string, v any) {
	t.Helper()
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.UseNumber()
	dec.Decode(&a)
	dec = json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	dec.Decode(&b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%T encodes as\n%s\nwant the documented\n%s", v, got, doc)
	}
}

func TestDocsAdminInfoExample(t *testing.T) {
	var info admin.Info
	decodeStrict(t, []byte(docsAdminInfo), &info)
	want := admin.Info{
		Version: "v1.0.0", UptimeMS: 86400000,
		Config: admin.Config{
			Listen: "0.0.0.0:7070", OpsListen: "0.0.0.0:9090", TLS: true, MTLS: true,
			ACLFile: "/etc/monolock/acl.json", AuditLog: "/var/log/monolock/audit.jsonl", IOTimeoutMS: 5000,
		},
		Locks: 2, Sessions: 5,
	}
	if info != want {
		t.Fatalf("decoded %+v, want %+v", info, want)
	}
	sameJSON(t, docsAdminInfo, info)
}

func TestDocsAdminLocksExample(t *testing.T) {
	var list admin.LockList
	decodeStrict(t, []byte(docsAdminLocks), &list)
	if len(list.Locks) != 1 {
		t.Fatalf("locks %+v", list.Locks)
	}
	l := list.Locks[0]
	since := time.Date(2026, 8, 8, 12, 0, 0, 0, time.UTC)
	wantHolder := admin.Holder{Identity: "spiffe://prod/worker/1", RemoteAddr: "10.0.0.5:52114", Since: since, LeaseMS: 2000, Token: 27262976001}
	wantWaiters := []admin.Waiter{{Identity: "spiffe://prod/worker/2", RemoteAddr: "10.0.0.6:41230", QueuedAt: since.Add(7 * time.Second)}}
	if l.Name != "nightly/import" || l.Holder == nil || !l.Holder.Since.Equal(since) || !reflect.DeepEqual(l.Waiters[0].QueuedAt.UTC(), wantWaiters[0].QueuedAt) {
		t.Fatalf("decoded %+v", l)
	}
	l.Holder.Since, l.Waiters[0].QueuedAt = since, wantWaiters[0].QueuedAt
	if *l.Holder != wantHolder || !reflect.DeepEqual(l.Waiters, wantWaiters) {
		t.Fatalf("decoded %+v %+v", *l.Holder, l.Waiters)
	}
	sameJSON(t, docsAdminLocks, list)
	// "GET /api/locks/{name} returns the same shape for one lock".
	one, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var detail admin.Lock
	decodeStrict(t, one, &detail)
}

// TestDocsTokenSize settles the docs' example token (27262976001, eleven
// digits) against the server's tokens (sixteen digits today): the example
// has the server's format, unix second << 20 | counter, at second 26000;
// a real token is larger, and stays below 2^53 until the year 2242, so
// JSON readers that use float64 (jq, JavaScript) read admin and audit
// tokens exactly. The formula is documented in package locktable.
func TestDocsTokenSize(t *testing.T) {
	const example = 27262976001
	if example>>20 != 26000 || example&(1<<20-1) != 1 {
		t.Fatalf("the example token is not second<<20|counter")
	}
	ts := monolocktest.NewServer(t)
	c := dial(t, ts.Addr)
	c.acquire("size", time.Minute)
	token := c.expect(protocol.TypeAcquired).Token
	now := uint64(time.Now().Unix())
	if sec := token >> 20; sec+1 < now || sec > now+1 {
		t.Fatalf("token %d: second %d, want about %d", token, sec, now)
	}
	if token >= 1<<53 || uint64(float64(token)) != token {
		t.Fatalf("token %d does not survive a float64 JSON reader", token)
	}
}

// TestDocsAdminLive: a live TLS + mTLS server with an audit log answers
// GET /api/info, GET /api/locks and GET /api/locks/{name} in exactly the
// documented shapes (adminGet decodes strictly), with the documented
// values: typed config, top-level counts, waiters as an array in both the
// list and the detail.
func TestDocsAdminLive(t *testing.T) {
	dir := t.TempDir()
	p := newPKIFiles(t, dir, "CA")
	auditPath := filepath.Join(dir, "audit.jsonl")
	ts := monolocktest.NewServerConfig(t, server.Config{
		TLSCertFile: p.cert, TLSKeyFile: p.key, TLSClientCAFile: p.clientCA, AuditLog: auditPath,
		Listen: "0.0.0.0:7070", OpsListen: "0.0.0.0:9090",
	})
	h := ts.Server().AdminHandler()
	owner := tlsDial(t, ts.Addr, p.ca, p.ca.Client(t, uriClient))
	owner.acquire("nightly/import", 2*time.Second)
	token := owner.expect(protocol.TypeAcquired).Token
	waiter := tlsDial(t, ts.Addr, p.ca, p.ca.Client(t, cnClient))
	waiter.acquire("nightly/import", 2*time.Second)
	waiter.expect(protocol.TypeWaiting)
	other := tlsDial(t, ts.Addr, p.ca, p.ca.Client(t, cnClient))
	other.acquire("other", 2*time.Second)
	other.expect(protocol.TypeAcquired)

	var info admin.Info
	if code := adminGet(t, h, "/api/info", &info); code != 200 {
		t.Fatalf("GET /api/info: %d", code)
	}
	wantCfg := admin.Config{
		Listen: "0.0.0.0:7070", OpsListen: "0.0.0.0:9090", TLS: true, MTLS: true,
		AuditLog: auditPath, IOTimeoutMS: server.DefaultIOTimeout.Milliseconds(),
	}
	if info.Config != wantCfg || info.Locks != 2 || info.Sessions != 3 || info.Version == "" || info.UptimeMS < 0 {
		t.Fatalf("info %+v, want config %+v, 2 locks, 3 sessions", info, wantCfg)
	}

	var list admin.LockList
	if code := adminGet(t, h, "/api/locks?match="+url.QueryEscape("nightly/*"), &list); code != 200 {
		t.Fatalf("GET /api/locks: %d", code)
	}
	if len(list.Locks) != 1 {
		t.Fatalf("match nightly/*: %+v", list.Locks)
	}
	l := list.Locks[0]
	if l.Name != "nightly/import" || l.Holder == nil || l.Holder.Token != token || l.Holder.LeaseMS != 2000 ||
		l.Holder.Identity != uriClient.URIs[0] || len(l.Waiters) != 1 || l.Waiters[0].Identity != cnClient.CommonName ||
		l.Waiters[0].RemoteAddr != waiter.conn.LocalAddr().String() {
		t.Fatalf("entry %+v (holder %+v)", l, l.Holder)
	}
	var detail admin.Lock
	if code := adminGet(t, h, "/api/locks/"+url.PathEscape("nightly/import"), &detail); code != 200 {
		t.Fatalf("GET detail: %d", code)
	}
	if !reflect.DeepEqual(detail, l) {
		t.Fatalf("detail %+v differs from the list entry %+v", detail, l)
	}
}
