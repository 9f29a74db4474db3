package server_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/admin"
	"github.com/monolock/monolock-bench/monolock/internal/testpki"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// pkiFiles is a CA, a loopback server certificate and the files a server
// reads them from.
type pkiFiles struct {
	ca                  *testpki.CA
	cert, key, clientCA string
}

func newPKIFiles(t *testing.T, dir, name string) pkiFiles {
	t.Helper()
	ca := testpki.NewCA(t, name)
	p := pkiFiles{ca: ca}
	p.cert, p.key = ca.Server(t).WriteFiles(t, dir, "server")
	p.clientCA = ca.WriteFile(t, dir, "client-ca.crt")
	return p
}

// The three kinds of client certificate and the identity each one carries.
var (
	uriClient = testpki.Subject{CommonName: "ignored-cn", DNSNames: []string{"ignored.example"}, URIs: []string{"spiffe://example.org/ns/prod/sa/api"}}
	dnsClient = testpki.Subject{CommonName: "ignored-cn", DNSNames: []string{"batch-1.workers.internal", "second.example"}}
	cnClient  = testpki.Subject{CommonName: "reporting"}
)

const (
	uriIdentity = "spiffe://example.org/ns/prod/sa/api"
	dnsIdentity = "batch-1.workers.internal"
	cnIdentity  = "reporting"
)

// tlsConn dials addr with TLS, trusting ca and presenting client (if any).
// The handshake itself may succeed even when the server refuses the client
// certificate (TLS 1.3 reports that on the first read).
func tlsConn(t *testing.T, addr string, ca *testpki.CA, client *testpki.Cert) (*tls.Conn, error) {
	t.Helper()
	cfg := &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}
	if client != nil {
		cfg.Certificates = []tls.Certificate{client.TLS}
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: wait}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return c, nil
}

func tlsDial(t *testing.T, addr string, ca *testpki.CA, client *testpki.Cert) *rawClient {
	t.Helper()
	c, err := tlsConn(t, addr, ca, client)
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	return &rawClient{t: t, conn: c}
}

// expectRefused checks that a connection gets no protocol frame for an
// ACQUIRE: the TLS layer refused it.
func expectRefused(t *testing.T, c net.Conn, err error) {
	t.Helper()
	if err != nil {
		return // refused during the handshake
	}
	c.SetDeadline(time.Now().Add(wait))
	c.Write(acquireFrame("a", time.Second))
	f, err := protocol.ReadServerFrame(c)
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("refused client got frame %+v, err %v", f, err)
	}
}

// auditLines reads the audit log at path.
func auditLines(t *testing.T, path string) []map[string]any {
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
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// events summarises audit lines as "event lock identity".
func events(lines []map[string]any) []string {
	var out []string
	for _, l := range lines {
		out = append(out, fmt.Sprintf("%s %s %s", l["event"], l["lock"], l["identity"]))
	}
	return out
}

// adminGet decodes a GET of the admin API.
func adminGet(t *testing.T, h http.Handler, path string, out any) int {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if out != nil {
		// Strict: the answer has exactly the documented fields.
		dec := json.NewDecoder(rec.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(out); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, rec.Body)
		}
	}
	return rec.Code
}

// lockDetail is the documented shape of GET /api/locks/{name}.
type lockDetail = admin.Lock

func TestMutualTLSIdentityInAdminAndAudit(t *testing.T) {
	dir := t.TempDir()
	p := newPKIFiles(t, dir, "CA")
	auditPath := filepath.Join(dir, "audit.log")
	ts := monolocktest.NewServerConfig(t, server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key, TLSClientCAFile: p.clientCA, AuditLog: auditPath})

	owner := tlsDial(t, ts.Addr, p.ca, p.ca.Client(t, uriClient))
	owner.acquire("shared/x", time.Minute)
	token := owner.expect(protocol.TypeAcquired).Token
	w1 := tlsDial(t, ts.Addr, p.ca, p.ca.Client(t, dnsClient))
	w1.acquire("shared/x", time.Minute)
	w1.expect(protocol.TypeWaiting)
	w2 := tlsDial(t, ts.Addr, p.ca, p.ca.Client(t, cnClient))
	w2.acquire("shared/x", time.Minute)
	w2.expect(protocol.TypeWaiting)

	var d lockDetail
	if code := adminGet(t, ts.Server().AdminHandler(), "/api/locks/"+url.PathEscape("shared/x"), &d); code != 200 {
		t.Fatalf("admin status %d", code)
	}
	if d.Holder == nil || d.Holder.Identity != uriIdentity || d.Holder.Token != token || d.Holder.RemoteAddr != owner.conn.LocalAddr().String() {
		t.Fatalf("holder %+v", d.Holder)
	}
	if len(d.Waiters) != 2 || d.Waiters[0].Identity != dnsIdentity || d.Waiters[1].Identity != cnIdentity ||
		d.Waiters[0].RemoteAddr != w1.conn.LocalAddr().String() {
		t.Fatalf("waiters %+v", d.Waiters)
	}

	owner.conn.Close()
	w1.expect(protocol.TypeAcquired)
	eventually(t, "audit of the handover", func() bool { return len(auditLines(t, auditPath)) >= 3 })
	got := events(auditLines(t, auditPath))
	want := []string{"granted shared/x " + uriIdentity, "released shared/x " + uriIdentity, "granted shared/x " + dnsIdentity}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMutualTLSRefusals(t *testing.T) {
	dir := t.TempDir()
	p := newPKIFiles(t, dir, "CA")
	ts := monolocktest.NewServerConfig(t, server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key, TLSClientCAFile: p.clientCA})
	foreign := testpki.NewCA(t, "foreign")

	t.Run("no client certificate", func(t *testing.T) {
		before := metric(t, ts.Server(), "monolock_tls_handshake_errors_total")
		c, err := tlsConn(t, ts.Addr, p.ca, nil)
		expectRefused(t, c, err)
		eventually(t, "handshake error counted", func() bool {
			return metric(t, ts.Server(), "monolock_tls_handshake_errors_total") > before
		})
	})
	t.Run("certificate from a foreign CA", func(t *testing.T) {
		c, err := tlsConn(t, ts.Addr, p.ca, foreign.Client(t, uriClient))
		expectRefused(t, c, err)
	})
	t.Run("plaintext on the TLS port", func(t *testing.T) {
		before := metric(t, ts.Server(), "monolock_tls_handshake_errors_total")
		c := dial(t, ts.Addr)
		c.acquire("a", time.Second)
		c.conn.SetReadDeadline(time.Now().Add(wait))
		b, err := io.ReadAll(c.conn)
		if f, ferr := protocol.ReadServerFrame(strings.NewReader(string(b))); ferr == nil {
			t.Fatalf("plaintext client got a protocol frame %+v", f)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the server kept a plaintext connection open")
		}
		eventually(t, "handshake error counted", func() bool {
			return metric(t, ts.Server(), "monolock_tls_handshake_errors_total") > before
		})
	})
	t.Run("valid client still served", func(t *testing.T) {
		c := tlsDial(t, ts.Addr, p.ca, p.ca.Client(t, cnClient))
		c.acquire("a", time.Second)
		c.expect(protocol.TypeAcquired)
	})
}

func TestPlainTLSWithoutIdentity(t *testing.T) {
	dir := t.TempDir()
	p := newPKIFiles(t, dir, "CA")
	ts := monolocktest.NewServerConfig(t, server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key})
	c := tlsDial(t, ts.Addr, p.ca, nil)
	c.acquire("a", time.Minute)
	c.expect(protocol.TypeAcquired)
	var d lockDetail
	adminGet(t, ts.Server().AdminHandler(), "/api/locks/a", &d)
	if d.Holder == nil || d.Holder.Identity != "" {
		t.Fatalf("holder %+v, want an empty identity without mTLS", d.Holder)
	}
}

const testACL = `{"rules": [
  {"identity": "spiffe://example.org/ns/prod/*", "locks": ["prod/*", "shared"]},
  {"identity": "batch-?.workers.internal",      "locks": ["jobs/*"]}
]}`

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects a server's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestACLAllowsAndDenies(t *testing.T) {
	dir := t.TempDir()
	p := newPKIFiles(t, dir, "CA")
	aclPath, auditPath := filepath.Join(dir, "acl.json"), filepath.Join(dir, "audit.log")
	writeFile(t, aclPath, testACL)
	logs := &logBuffer{}
	ts := monolocktest.NewServerConfig(t, server.Config{
		TLSCertFile: p.cert, TLSKeyFile: p.key, TLSClientCAFile: p.clientCA, ACLFile: aclPath, AuditLog: auditPath,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	uri, dns, cn := p.ca.Client(t, uriClient), p.ca.Client(t, dnsClient), p.ca.Client(t, cnClient)
	tests := []struct {
		client  *testpki.Cert
		lock    string
		allowed bool
	}{
		{uri, "prod/db", true},
		{uri, "prod/db/migrations", true},
		{uri, "shared", true},
		{uri, "jobs/nightly", false},
		{uri, "Shared", false},
		{dns, "jobs/nightly", true},
		{dns, "prod/db", false},
		{cn, "shared", false}, // no rule matches "reporting": deny by default
	}
	denied := 0
	for _, tt := range tests {
		c := tlsDial(t, ts.Addr, p.ca, tt.client)
		c.acquire(tt.lock, time.Minute)
		if tt.allowed {
			c.expect(protocol.TypeAcquired)
			c.conn.Close()
		} else {
			c.expectError(protocol.CodeNotAuthorized)
			denied++
		}
	}
	if n := metric(t, ts.Server(), "monolock_acl_denials_total"); n != float64(denied) {
		t.Fatalf("monolock_acl_denials_total = %v, want %d", n, denied)
	}
	// operations/acl.mdx: "a log line at info level".
	if !strings.Contains(logs.String(), `level=INFO msg="monolock: ACL denied lock"`) || !strings.Contains(logs.String(), "lock=jobs/nightly") {
		t.Fatalf("no log line for the denial:\n%s", logs)
	}
	ts.Close() // writes the audit queue
	var deniedLines []string
	for _, l := range auditLines(t, auditPath) {
		if l["event"] == "denied" {
			deniedLines = append(deniedLines, fmt.Sprintf("%s %s", l["lock"], l["identity"]))
			if l["remote_addr"] == "" {
				t.Errorf("denied line without remote_addr: %v", l)
			}
		}
	}
	want := []string{"jobs/nightly " + uriIdentity, "Shared " + uriIdentity, "prod/db " + dnsIdentity, "shared " + cnIdentity}
	if strings.Join(deniedLines, "|") != strings.Join(want, "|") {
		t.Fatalf("denied audit lines %v, want %v", deniedLines, want)
	}
}

func TestReloadBrokenThenGoodACL(t *testing.T) {
	dir := t.TempDir()
	p := newPKIFiles(t, dir, "CA")
	aclPath := filepath.Join(dir, "acl.json")
	writeFile(t, aclPath, testACL)
	ts := monolocktest.NewServerConfig(t, server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key, TLSClientCAFile: p.clientCA, ACLFile: aclPath})
	s := ts.Server()
	uri, cn := p.ca.Client(t, uriClient), p.ca.Client(t, cnClient)
	try := func(client *testpki.Cert, lock string) protocol.Type {
		t.Helper()
		c := tlsDial(t, ts.Addr, p.ca, client)
		c.acquire(lock, time.Minute)
		f, err := c.next(wait)
		if err != nil {
			t.Fatal(err)
		}
		if f.Type == protocol.TypeError && f.Code != protocol.CodeNotAuthorized {
			t.Fatalf("unexpected error frame %+v", f)
		}
		c.conn.Close()
		return f.Type
	}
	const granted, denied = protocol.TypeAcquired, protocol.TypeError
	if try(cn, "reports/daily") != denied || try(uri, "prod/a") != granted {
		t.Fatal("initial rules not in force")
	}
	live := tlsDial(t, ts.Addr, p.ca, uri)
	live.acquire("prod/db", time.Minute)
	live.expect(protocol.TypeAcquired)

	// A rule without lock patterns refuses to load; the old rules stay.
	writeFile(t, aclPath, `{"rules": [{"identity": "reporting"}]}`)
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "no lock patterns") {
		t.Fatalf("Reload of a broken ACL = %v", err)
	}
	if try(cn, "reports/daily") != denied || try(uri, "prod/b") != granted {
		t.Fatal("a broken reload changed the rules in force")
	}

	writeFile(t, aclPath, `{"rules": [{"identity": "reporting", "locks": ["reports/*"]}]}`)
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if try(cn, "reports/daily") != granted || try(uri, "prod/c") != denied {
		t.Fatal("a good reload did not replace the rules")
	}
	// The session granted under the old rules is untouched.
	live.heartbeat()
	live.expect(protocol.TypeAcquired)
}

func TestReloadTLSFiles(t *testing.T) {
	dir := t.TempDir()
	gen1 := newPKIFiles(t, dir, "CA 1")
	logs := &logBuffer{}
	ts := monolocktest.NewServerConfig(t, server.Config{TLSCertFile: gen1.cert, TLSKeyFile: gen1.key, TLSClientCAFile: gen1.clientCA, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	s := ts.Server()
	client1 := gen1.ca.Client(t, uriClient)
	live := tlsDial(t, ts.Addr, gen1.ca, client1)
	live.acquire("a", time.Minute)
	live.expect(protocol.TypeAcquired)

	// A broken CA file: the reload fails, is logged, and generation 1
	// keeps serving.
	writeFile(t, gen1.clientCA, "not a certificate")
	if err := s.Reload(); err == nil {
		t.Fatal("Reload accepted a CA file without certificates")
	}
	if !strings.Contains(logs.String(), "reload failed; keeping the previous TLS certificates") {
		t.Fatalf("failed reload not logged:\n%s", logs)
	}
	c := tlsDial(t, ts.Addr, gen1.ca, client1)
	c.acquire("b", time.Minute)
	c.expect(protocol.TypeAcquired)

	// Generation 2 written over the same paths and reloaded.
	gen2ca := testpki.NewCA(t, "CA 2")
	gen2ca.Server(t).WriteFiles(t, dir, "server")
	gen2ca.WriteFile(t, dir, "client-ca.crt")
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	c = tlsDial(t, ts.Addr, gen2ca, gen2ca.Client(t, dnsClient))
	c.acquire("c", time.Minute)
	c.expect(protocol.TypeAcquired)
	old, err := tlsConn(t, ts.Addr, gen2ca, client1)
	expectRefused(t, old, err)
	if _, err := tlsConn(t, ts.Addr, gen1.ca, client1); err == nil {
		t.Fatal("the replaced server certificate is still served")
	}

	// The session established before the reloads is untouched.
	live.heartbeat()
	live.expect(protocol.TypeAcquired)
}

func TestAuditRotationByRenameAndReload(t *testing.T) {
	dir := t.TempDir()
	auditPath := filepath.Join(dir, "audit.log")
	ts := monolocktest.NewServerConfig(t, server.Config{AuditLog: auditPath})
	cycle := func(name string) {
		c := dial(t, ts.Addr)
		c.acquire(name, time.Minute)
		c.expect(protocol.TypeAcquired)
		c.conn.Close()
	}
	cycle("one")
	eventually(t, "audit of one", func() bool { return len(auditLines(t, auditPath)) == 2 })
	rotated := auditPath + ".1"
	if err := os.Rename(auditPath, rotated); err != nil {
		t.Fatal(err)
	}
	if err := ts.Server().Reload(); err != nil {
		t.Fatal(err)
	}
	cycle("two")
	eventually(t, "audit of two", func() bool { return len(auditLines(t, auditPath)) == 2 })
	if got := strings.Join(events(auditLines(t, rotated)), "|"); got != "granted one |released one " {
		t.Fatalf("rotated file: %s", got)
	}
	if got := strings.Join(events(auditLines(t, auditPath)), "|"); got != "granted two |released two " {
		t.Fatalf("new file: %s", got)
	}
	// Reopen failing (directory gone) keeps writing to the open file.
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	if err := ts.Server().Reload(); err == nil {
		t.Fatal("Reload reopened an audit log in a missing directory")
	}
	cycle("three")
	eventually(t, "audit of three", func() bool { return len(auditLines(t, filepath.Join(moved, "audit.log"))) == 4 })
}

// adminDo calls the admin API over a real HTTP server.
func adminDo(t *testing.T, base, method, path string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// TestForceReleaseAndKickAsClientsSeeThem drives the admin API over HTTP
// and watches raw protocol frames and the audit log.
func TestForceReleaseAndKickAsClientsSeeThem(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	ts := monolocktest.NewServerConfig(t, server.Config{AuditLog: auditPath})
	admin := httptest.NewServer(ts.Server().AdminHandler())
	t.Cleanup(admin.Close)
	const name = "jobs/nightly"
	path := "/api/locks/" + url.PathEscape(name)

	owner := dial(t, ts.Addr)
	owner.acquire(name, time.Minute)
	token := owner.expect(protocol.TypeAcquired).Token
	var ws []*rawClient
	for range 4 {
		w := dial(t, ts.Addr)
		w.acquire(name, time.Minute)
		w.expect(protocol.TypeWaiting)
		ws = append(ws, w)
	}

	var rel struct {
		Released bool   `json:"released"`
		Token    uint64 `json:"token"`
	}
	if code := adminDo(t, admin.URL, "POST", path+"/release", &rel); code != 200 || !rel.Released || rel.Token != token {
		t.Fatalf("release: %d %+v, want token %d", code, rel, token)
	}
	owner.expectError(protocol.CodeClosedByAdmin)
	next := ws[0].expect(protocol.TypeAcquired).Token
	if next <= token {
		t.Fatalf("promoted token %d not above the released %d", next, token)
	}

	// Kick the second of the three remaining waiters.
	kicked := ws[2]
	var k struct {
		Kicked bool `json:"kicked"`
	}
	if code := adminDo(t, admin.URL, "DELETE", path+"/waiters/"+url.PathEscape(kicked.conn.LocalAddr().String()), &k); code != 200 || !k.Kicked {
		t.Fatalf("kick: %d %+v", code, k)
	}
	kicked.expectError(protocol.CodeClosedByAdmin)
	var d lockDetail
	adminGet(t, ts.Server().AdminHandler(), path, &d)
	if len(d.Waiters) != 2 || d.Waiters[0].RemoteAddr != ws[1].conn.LocalAddr().String() || d.Waiters[1].RemoteAddr != ws[3].conn.LocalAddr().String() {
		t.Fatalf("queue after kick: %+v", d.Waiters)
	}
	ws[1].heartbeat()
	ws[1].expect(protocol.TypeWaiting)
	ws[3].heartbeat()
	ws[3].expect(protocol.TypeWaiting)

	// 404s: no owner to release, no such waiter.
	var e struct {
		Error string `json:"error"`
	}
	if code := adminDo(t, admin.URL, "POST", "/api/locks/idle/release", &e); code != 404 || e.Error == "" {
		t.Fatalf("release of an idle lock: %d %+v", code, e)
	}
	if code := adminDo(t, admin.URL, "DELETE", path+"/waiters/"+url.PathEscape(kicked.conn.LocalAddr().String()), &e); code != 404 {
		t.Fatalf("second kick: %d", code)
	}

	// The promoted holder leaves: the order of the rest is kept.
	ws[0].conn.Close()
	third := ws[1].expect(protocol.TypeAcquired).Token
	ws[1].conn.Close()
	ws[3].expect(protocol.TypeAcquired)

	eventually(t, "audit complete", func() bool { return len(auditLines(t, auditPath)) >= 9 })
	var got []string
	for _, l := range auditLines(t, auditPath) {
		s := fmt.Sprintf("%s %v", l["event"], l["remote_addr"])
		if l["reason"] != nil {
			s += " " + l["reason"].(string)
		}
		if l["event"] == "granted" || l["event"] == "force_release" || l["event"] == "released" {
			s += fmt.Sprintf(" %.0f", l["token"])
		}
		got = append(got, s)
	}
	addr := func(c *rawClient) string { return c.conn.LocalAddr().String() }
	want := []string{
		fmt.Sprintf("granted %s %d", addr(owner), token),
		fmt.Sprintf("force_release %s %d", addr(owner), token),
		fmt.Sprintf("released %s force %d", addr(owner), token),
		fmt.Sprintf("granted %s %d", addr(ws[0]), next),
		fmt.Sprintf("kick_waiter %s", addr(kicked)),
		fmt.Sprintf("released %s graceful %d", addr(ws[0]), next),
		fmt.Sprintf("granted %s %d", addr(ws[1]), third),
		fmt.Sprintf("released %s graceful %d", addr(ws[1]), third),
	}
	if strings.Join(got[:len(want)], "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit:\n%s\nwant prefix:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAuditReleasedPrecedesGranted churns one lock with many clients and
// checks the audit invariant: per lock, granted and released alternate,
// each released carries the token of the granted before it, and tokens
// increase.
func TestAuditReleasedPrecedesGranted(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	ts := monolocktest.NewServerConfig(t, server.Config{AuditLog: auditPath})
	const clients, rounds = 8, 10
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for range rounds {
				c, err := net.Dial("tcp", ts.Addr)
				if err != nil {
					t.Error(err)
					return
				}
				c.SetDeadline(time.Now().Add(4 * wait))
				c.Write(acquireFrame(fmt.Sprintf("hot-%d", i%2), time.Minute))
				for {
					f, err := protocol.ReadServerFrame(c)
					if err != nil {
						t.Error(err)
						c.Close()
						return
					}
					if f.Type == protocol.TypeAcquired {
						break
					}
				}
				c.Close()
			}
		})
	}
	wg.Wait()
	eventually(t, "all releases audited", func() bool { return len(auditLines(t, auditPath)) == 2*clients*rounds })
	holding := map[string]float64{}
	last := 0.0
	for i, l := range auditLines(t, auditPath) {
		lock, tok := l["lock"].(string), l["token"].(float64)
		switch l["event"] {
		case "granted":
			if holding[lock] != 0 {
				t.Fatalf("line %d: %s granted while token %.0f still held", i, lock, holding[lock])
			}
			if tok <= last {
				t.Fatalf("line %d: token %.0f not above %.0f", i, tok, last)
			}
			holding[lock], last = tok, tok
		case "released":
			if holding[lock] != tok {
				t.Fatalf("line %d: %s released token %.0f, held %.0f", i, lock, tok, holding[lock])
			}
			holding[lock] = 0
		default:
			t.Fatalf("line %d: unexpected %v", i, l)
		}
	}
}

func TestOpsConfigErrors(t *testing.T) {
	dir := t.TempDir()
	p := newPKIFiles(t, dir, "CA")
	aclPath := filepath.Join(dir, "acl.json")
	writeFile(t, aclPath, testACL)
	badACL := filepath.Join(dir, "bad.json")
	writeFile(t, badACL, `{"rules": [{"locks": ["x"]}]}`)
	tests := []struct {
		name string
		cfg  server.Config
		want error
		text string
	}{
		{"key without cert", server.Config{TLSKeyFile: p.key}, server.ErrTLSKeyWithoutCert, ""},
		{"cert without key", server.Config{TLSCertFile: p.cert}, server.ErrTLSCertWithoutKey, ""},
		{"client CA without TLS", server.Config{TLSClientCAFile: p.clientCA}, server.ErrClientCAWithoutTLS, ""},
		{"ACL without mTLS", server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key, ACLFile: aclPath}, server.ErrACLWithoutMTLS, ""},
		{"TLSConfig and files", server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key, TLSConfig: &tls.Config{}}, server.ErrTLSConfigAndFiles, ""},
		{"key does not match", server.Config{TLSCertFile: p.cert, TLSKeyFile: p.clientCA}, nil, "tls"},
		{"invalid ACL", server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key, TLSClientCAFile: p.clientCA, ACLFile: badACL}, nil, "rule 0: no identity"},
		{"missing ACL", server.Config{TLSCertFile: p.cert, TLSKeyFile: p.key, TLSClientCAFile: p.clientCA, ACLFile: filepath.Join(dir, "none.json")}, os.ErrNotExist, ""},
		{"audit log in a missing directory", server.Config{AuditLog: filepath.Join(dir, "no", "audit.log")}, os.ErrNotExist, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := server.New(tt.cfg)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("New = %v, want %v %q", err, tt.want, tt.text)
			}
		})
	}
}
