package server_test

// The contract of the public docs page operations/observability.md: the
// metric set (names, types, label sets), monolock_acquires_total counting
// granted ownerships, and the health endpoints. The diagnostic log's
// timestamps (UTC, RFC 3339) are tested in cmd/monolock, which builds the
// logger.

import (
	"maps"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// docsMetrics is the page's table: name → type ("" for the runtime data,
// whose type the docs leave open). The audit queue metrics are this
// project's additions (README, server.Config.AuditLog).
var docsMetrics = map[string]string{
	"monolock_connections_active":         "gauge",
	"monolock_locks_held":                 "gauge",
	"monolock_waiters":                    "gauge",
	"monolock_acquires_total":             "counter",
	"monolock_acl_denials_total":          "counter",
	"monolock_releases_total":             "counter",
	"monolock_protocol_errors_total":      "counter",
	"monolock_connections_accepted_total": "counter",
	"monolock_accept_errors_total":        "counter",
	"monolock_tls_handshake_errors_total": "counter",
	"monolock_heartbeats_total":           "counter",
	"monolock_wait_seconds":               "summary",
	"monolock_hold_seconds":               "summary",
	"go_goroutines":                       "",
	"go_heap_alloc_bytes":                 "",
	"go_gc_cycles_total":                  "",
}

var additions = map[string]string{
	"monolock_audit_queued":        "gauge",
	"monolock_audit_dropped_total": "counter",
}

var (
	typeLine   = regexp.MustCompile(`^# TYPE (\S+) (\S+)$`)
	sampleLine = regexp.MustCompile(`^([a-z_]+)(\{[^}]*\})? \S+$`)
)

func TestDocsMetricSet(t *testing.T) {
	ts := monolocktest.NewServer(t)
	c := dial(t, ts.Addr)
	c.acquire("m", time.Minute)
	c.expect(protocol.TypeAcquired)
	rec := httptest.NewRecorder()
	ts.Server().OpsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	types := map[string]string{}
	labels := map[string][]string{} // metric → label sets of its samples
	for l := range strings.Lines(rec.Body.String()) {
		l = strings.TrimSpace(l)
		if m := typeLine.FindStringSubmatch(l); m != nil {
			types[m[1]] = m[2]
			continue
		}
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		m := sampleLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unparsable sample %q", l)
		}
		labels[m[1]] = append(labels[m[1]], m[2])
	}
	want := maps.Clone(docsMetrics)
	maps.Copy(want, additions)
	if got, all := slices.Sorted(maps.Keys(types)), slices.Sorted(maps.Keys(want)); !slices.Equal(got, all) {
		t.Fatalf("metric families %v,\nwant %v", got, all)
	}
	for name, typ := range want {
		if typ != "" && types[name] != typ {
			t.Errorf("%s is a %s, want %s", name, types[name], typ)
		}
	}
	for _, s := range []string{"monolock_wait_seconds", "monolock_hold_seconds"} {
		if len(labels[s+"_sum"]) != 1 || len(labels[s+"_count"]) != 1 || len(labels[s]) != 0 {
			t.Errorf("%s: want _sum and _count only (no quantiles), got %v", s, labels)
		}
	}
	if got := strings.Join(labels["monolock_releases_total"], " "); got != `{reason="graceful"} {reason="expired"} {reason="io_timeout"} {reason="force"}` {
		t.Errorf("monolock_releases_total label set %s, want the documented reasons", got)
	}
	for _, set := range labels["monolock_protocol_errors_total"] {
		if !regexp.MustCompile(`^\{code="0x[0-9a-f]{2}"\}$`).MatchString(set) {
			t.Errorf("monolock_protocol_errors_total label %s, want {code=\"0x..\"}", set)
		}
	}
}

// TestDocsAcquiresCountGrants: monolock_acquires_total counts granted
// ownerships (issued tokens): a waiter that leaves before its turn adds
// nothing; a promotion adds one.
func TestDocsAcquiresCountGrants(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		srv := ts.Server()
		owner := connect(t, ts)
		owner.acquire("a", time.Minute)
		owner.expect(protocol.TypeAcquired)
		leaver := connect(t, ts)
		leaver.acquire("a", time.Minute)
		leaver.expect(protocol.TypeWaiting)
		next := connect(t, ts)
		next.acquire("a", time.Minute)
		next.expect(protocol.TypeWaiting)
		if n := metric(t, srv, "monolock_acquires_total"); n != 1 {
			t.Fatalf("acquires_total = %v with one owner and two waiters, want 1", n)
		}
		leaver.conn.Close()
		settled(t, "the leaver left the queue", func() bool { return metric(t, srv, "monolock_waiters") == 1 })
		owner.conn.Close()
		next.expect(protocol.TypeAcquired)
		if n := metric(t, srv, "monolock_acquires_total"); n != 2 {
			t.Fatalf("acquires_total = %v after one promotion, want 2", n)
		}
	})
}

func TestDocsHealthEndpoints(t *testing.T) {
	inBubble(t, server.Config{}, func(t *testing.T, ts *monolocktest.Server) {
		get := func(path string) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			ts.Server().OpsHandler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			return rec
		}
		// /readyz also waits for Serve to run, which monolocktest starts
		// in a goroutine.
		settled(t, "ready", func() bool { return get("/readyz").Code == 200 })
		for _, path := range []string{"/healthz", "/readyz"} {
			if rec := get(path); rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != "ok" {
				t.Errorf("%s = %d %q, want 200 ok", path, rec.Code, rec.Body)
			}
		}
		ts.Server().Shutdown(t.Context())
		for _, path := range []string{"/healthz", "/readyz"} {
			if rec := get(path); rec.Code != 503 {
				t.Errorf("%s after shutdown = %d, want 503", path, rec.Code)
			}
		}
	})
}
