package server

import (
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync/atomic"

	"github.com/monolock/monolock-bench/monolock/internal/locktable"
	metricsfmt "github.com/monolock/monolock-bench/monolock/internal/metrics"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// serverMetrics are the counters and summaries the server keeps; gauges are
// read from their sources at scrape time.
type serverMetrics struct {
	connections        atomic.Int64
	acquires           metricsfmt.Counter // grants: issued tokens
	aclDenials         metricsfmt.Counter
	releases           [len(locktable.Reasons)]metricsfmt.Counter // by locktable.Reason
	protocolErrors     [256]metricsfmt.Counter                    // ERROR frames sent, by code
	accepted           metricsfmt.Counter
	acceptErrors       metricsfmt.Counter
	tlsHandshakeErrors metricsfmt.Counter
	heartbeats         metricsfmt.Counter
	waitSeconds        metricsfmt.Summary
	holdSeconds        metricsfmt.Summary
}

// releaseReasons are the documented reason labels of
// monolock_releases_total; onRelease counts a shutdown as graceful.
var releaseReasons = [...]locktable.Reason{locktable.Graceful, locktable.Expired, locktable.IOTimeout, locktable.Force}

var runtimeSamples = []string{"/gc/heap/allocs:bytes", "/gc/heap/frees:bytes", "/gc/cycles/total:gc-cycles"}

// OpsHandler returns the ops HTTP surface: GET /metrics (Prometheus text
// format), /healthz and /readyz. /healthz answers 200 "ok" until shutdown
// begins and 503 from its first moment; /readyz also answers 503 while no
// Serve is accepting. Safe for concurrent use; serve it on its own listener,
// which should outlive the protocol side during shutdown.
func (s *Server) OpsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		status(w, !s.shuttingDown.Load())
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		status(w, !s.shuttingDown.Load() && s.serving.Load() > 0)
	})
	return mux
}

func status(w http.ResponseWriter, ok bool) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("shutting down\n"))
		return
	}
	w.Write([]byte("ok\n"))
}

func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	m := &s.metrics
	counts := s.table.Counts()
	mw := metricsfmt.NewWriter(w)
	one := func(v float64) metricsfmt.Sample { return metricsfmt.Sample{Value: v} }

	mw.Gauge("monolock_connections_active", "Open protocol connections, in any state.", one(float64(m.connections.Load())))
	mw.Gauge("monolock_locks_held", "Locks with an owner.", one(float64(counts.Held)))
	mw.Gauge("monolock_waiters", "Sessions queued for a lock.", one(float64(counts.Waiting)))
	mw.Counter("monolock_acquires_total", "Granted ownerships, that is, issued fencing tokens.", one(float64(m.acquires.Value())))
	mw.Counter("monolock_acl_denials_total", "ACQUIREs denied by the ACL (ERROR 0x18).", one(float64(m.aclDenials.Value())))
	releases := make([]metricsfmt.Sample, len(releaseReasons))
	for i, r := range releaseReasons {
		releases[i] = metricsfmt.Sample{Labels: metricsfmt.Label("reason", r.String()), Value: float64(m.releases[r].Value())}
	}
	mw.Counter("monolock_releases_total", "Ended ownerships, by reason.", releases...)
	var errs []metricsfmt.Sample
	for code := range m.protocolErrors {
		n := m.protocolErrors[code].Value()
		if n == 0 && protocol.CanonicalError(protocol.Code(code)) == nil {
			continue
		}
		errs = append(errs, metricsfmt.Sample{Labels: metricsfmt.Label("code", codeLabel(protocol.Code(code))), Value: float64(n)})
	}
	mw.Counter("monolock_protocol_errors_total", "ERROR frames sent, by code.", errs...)
	mw.Counter("monolock_connections_accepted_total", "Accepted protocol connections.", one(float64(m.accepted.Value())))
	mw.Counter("monolock_accept_errors_total", "Failed accepts (EMFILE, ENFILE, ...), each retried after a back-off.", one(float64(m.acceptErrors.Value())))
	mw.Counter("monolock_tls_handshake_errors_total", "Failed or timed-out TLS handshakes.", one(float64(m.tlsHandshakeErrors.Value())))
	mw.Counter("monolock_heartbeats_total", "HEARTBEAT frames received.", one(float64(m.heartbeats.Value())))
	var queued, dropped float64
	if l := s.ops.audit; l != nil {
		queued, dropped = float64(l.Queued()), float64(l.Dropped())
	}
	mw.Gauge("monolock_audit_queued", "Audit events waiting for the audit sink (0 without -audit-log).", one(queued))
	mw.Counter("monolock_audit_dropped_total", "Audit events dropped because the audit queue was full (a stalled or slow audit sink).", one(dropped))
	sum, n := m.waitSeconds.Value()
	mw.Summary("monolock_wait_seconds", "Time from ACQUIRE to grant.", sum, n)
	sum, n = m.holdSeconds.Value()
	mw.Summary("monolock_hold_seconds", "Time from grant to release.", sum, n)

	samples := make([]metrics.Sample, len(runtimeSamples))
	for i, name := range runtimeSamples {
		samples[i].Name = name
	}
	metrics.Read(samples)
	mw.Gauge("go_goroutines", "Goroutines that currently exist.", one(float64(runtime.NumGoroutine())))
	mw.Gauge("go_heap_alloc_bytes", "Bytes of allocated heap objects.", one(float64(samples[0].Value.Uint64()-samples[1].Value.Uint64())))
	mw.Counter("go_gc_cycles_total", "Completed GC cycles.", one(float64(samples[2].Value.Uint64())))
	if err := mw.Flush(); err != nil {
		s.log.Debug("monolock: writing metrics", "err", err)
	}
}

func codeLabel(c protocol.Code) string {
	const hex = "0123456789abcdef"
	return string([]byte{'0', 'x', hex[c>>4], hex[c&0xf]})
}
