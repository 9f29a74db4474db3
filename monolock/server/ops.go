package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/monolock/monolock-bench/monolock/admin"
	"github.com/monolock/monolock-bench/monolock/internal/acl"
	"github.com/monolock/monolock-bench/monolock/internal/audit"
	"github.com/monolock/monolock-bench/monolock/internal/locktable"
	"github.com/monolock/monolock-bench/monolock/internal/tlsconfig"
)

// Errors about inconsistent operations settings, returned by New.
var (
	ErrTLSKeyWithoutCert  = errors.New("monolock: a TLS key needs a TLS certificate (-tls-cert)")
	ErrTLSCertWithoutKey  = errors.New("monolock: a TLS certificate needs its key (-tls-key)")
	ErrClientCAWithoutTLS = errors.New("monolock: a client CA (-tls-client-ca) needs TLS (-tls-cert and -tls-key)")
	ErrACLWithoutMTLS     = errors.New("monolock: an ACL file (-acl-file) needs client certificates (-tls-client-ca)")
	ErrTLSConfigAndFiles  = errors.New("monolock: TLSConfig and TLS files are mutually exclusive")
)

// ops is the operations state built from Config: reloadable TLS files, ACL
// and audit log. Each part is nil when not configured.
type ops struct {
	tls     *tlsconfig.Reloader
	acl     *acl.File
	audit   *audit.Log
	started time.Time
	// auditFailing suppresses repeated log lines while the audit log
	// cannot be written (disk full): one line when it starts failing, one
	// when it recovers. Used by the audit writer goroutine only.
	auditFailing bool
	// auditDropping is set by the first event dropped because the audit
	// queue is full, and cleared by the next successful write: one log
	// line per episode.
	auditDropping atomic.Bool
}

// openOps validates the operations settings of cfg and opens its files.
// On error nothing stays open.
func openOps(cfg *Config, log *slog.Logger) (*ops, error) {
	o := &ops{started: time.Now()}
	files := tlsconfig.Files{CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile, ClientCAFile: cfg.TLSClientCAFile}
	switch {
	case files.KeyFile != "" && files.CertFile == "":
		return nil, ErrTLSKeyWithoutCert
	case files.CertFile != "" && files.KeyFile == "":
		return nil, ErrTLSCertWithoutKey
	case files.ClientCAFile != "" && files.CertFile == "":
		return nil, ErrClientCAWithoutTLS
	case cfg.ACLFile != "" && files.ClientCAFile == "":
		return nil, ErrACLWithoutMTLS
	case files.CertFile != "" && cfg.TLSConfig != nil:
		return nil, ErrTLSConfigAndFiles
	}
	var err error
	if files.CertFile != "" {
		if o.tls, err = tlsconfig.Load(files); err != nil {
			return nil, fmt.Errorf("monolock: %w", err)
		}
		cfg.TLSConfig = o.tls.ServerConfig()
	}
	if cfg.ACLFile != "" {
		if o.acl, err = acl.OpenFile(cfg.ACLFile); err != nil {
			return nil, fmt.Errorf("monolock: %w", err)
		}
	}
	if cfg.AuditLog != "" {
		if o.audit, err = audit.Open(cfg.AuditLog, cfg.AuditQueue, func(err error) { o.auditWritten(log, err) }); err != nil {
			return nil, fmt.Errorf("monolock: %w", err)
		}
	}
	return o, nil
}

// auditWritten logs the changes of the audit sink's health; the audit
// writer goroutine calls it after every line.
func (o *ops) auditWritten(log *slog.Logger, err error) {
	switch {
	case err != nil && !o.auditFailing:
		o.auditFailing = true
		log.Error("monolock: audit log write failed; further failures are not logged until it recovers", "err", err)
	case err == nil && o.auditFailing:
		o.auditFailing = false
		log.Warn("monolock: audit log writes again")
	}
	if err == nil && o.auditDropping.Swap(false) {
		log.Warn("monolock: audit log writes again after dropping events", "dropped_total", o.audit.Dropped())
	}
}

// Reload re-reads the TLS files and the ACL file and reopens the audit log
// (for SIGHUP). Each part is reloaded on its own: a part that fails keeps its
// previous working state, and the failure is logged and returned (joined
// with any other). Established sessions are untouched; new connections use
// the new TLS files and new ACQUIREs the new ACL. Safe for concurrent use.
func (s *Server) Reload() error {
	var errs []error
	step := func(what string, reload func() error, attrs ...any) {
		if err := reload(); err != nil {
			s.log.Error("monolock: reload failed; keeping the previous "+what, append(attrs, "err", err)...)
			errs = append(errs, err)
			return
		}
		s.log.Info("monolock: reloaded "+what, attrs...)
	}
	if t := s.ops.tls; t != nil {
		step("TLS certificates", t.Reload, "cert", s.cfg.TLSCertFile, "client_ca", s.cfg.TLSClientCAFile)
	}
	if a := s.ops.acl; a != nil {
		step("ACL", a.Reload, "file", a.Path())
	}
	if l := s.ops.audit; l != nil {
		step("audit log", l.Reopen, "path", l.Path())
	}
	return errors.Join(errs...)
}

// authorized applies the ACL to an ACQUIRE; without an ACL everything is
// allowed. A denial is counted, logged (at info: it is the client's
// error, not the server's) and audited.
func (s *Server) authorized(identity, remote, name string) bool {
	if s.ops.acl == nil || s.ops.acl.Allowed(identity, name) {
		return true
	}
	s.metrics.aclDenials.Inc()
	s.log.Info("monolock: ACL denied lock", "lock", name, "identity", identity, "remote", remote)
	s.audit(audit.Event{Kind: audit.Denied, Lock: name, Identity: identity, RemoteAddr: remote})
	return false
}

// auditGrant and auditRelease run under the lock table's mutex, so for one
// lock a released event is queued before the next granted event, and the
// audit writer keeps that order. They do no I/O.
func (s *Server) auditGrant(h locktable.Holder, waited time.Duration) {
	s.audit(audit.Event{Time: h.Since, Kind: audit.Granted, Lock: h.Name, Identity: h.Identity, RemoteAddr: h.RemoteAddr, Token: h.Token, Wait: waited})
}

func (s *Server) auditRelease(h locktable.Holder, held time.Duration, reason locktable.Reason) {
	if s.ops.audit == nil {
		return
	}
	now := time.Now()
	if reason == locktable.Force {
		s.audit(audit.Event{Time: now, Kind: audit.ForceRelease, Lock: h.Name, Identity: h.Identity, RemoteAddr: h.RemoteAddr, Token: h.Token})
	}
	s.audit(audit.Event{Time: now, Kind: audit.Released, Lock: h.Name, Identity: h.Identity, RemoteAddr: h.RemoteAddr, Token: h.Token, Held: held, Reason: reason.String()})
}

// auditKick records a waiter removed by an administrator. It runs under the
// lock table's mutex.
func (s *Server) auditKick(name, identity, remote string) {
	s.audit(audit.Event{Kind: audit.KickWaiter, Lock: name, Identity: identity, RemoteAddr: remote})
}

// audit queues an event for the audit log, without waiting for its sink.
// When the queue is full the event is dropped and counted
// (monolock_audit_dropped_total); the first drop of an episode is logged
// from a goroutine of its own, since the caller may hold the table's lock.
func (s *Server) audit(e audit.Event) {
	l := s.ops.audit
	if l == nil || l.Enqueue(e) || s.shuttingDown.Load() {
		return
	}
	if s.ops.auditDropping.CompareAndSwap(false, true) {
		go s.log.Error("monolock: audit queue full (the audit sink is stalled or too slow); dropping audit events, counted in monolock_audit_dropped_total, until it writes again",
			"queue", l.Capacity(), "path", l.Path())
	}
}

// closeOps closes the audit log once no session can write to it, waiting
// for the queued events until ctx ends.
func (s *Server) closeOps(ctx context.Context) {
	if s.ops.audit != nil {
		if err := s.ops.audit.Close(ctx); err != nil {
			s.log.Error("monolock: audit log not drained before shutdown; events still queued are lost", "err", err, "queued", s.ops.audit.Queued())
		}
	}
}

// AdminHandler returns the admin HTTP API: GET /api/info, GET
// /api/locks[?match=glob], GET /api/locks/{name}, POST
// /api/locks/{name}/release, DELETE /api/locks/{name}/waiters/{remote_addr}
// (see package admin for the JSON). It has no authentication: serve
// it on loopback, as the root handler of its own http.Server (a ServeMux in
// front would clean escaped lock names such as ".."). Safe for concurrent
// use.
func (s *Server) AdminHandler() http.Handler {
	return admin.NewHandler(s, s.adminInfo, s.log)
}

func (s *Server) adminInfo() admin.Info {
	st := s.Stats()
	listen := s.cfg.Listen
	if _, port, err := net.SplitHostPort(listen); err != nil || port == "0" {
		listen = strings.Join(s.listenAddrs(), ",")
	}
	return admin.Info{
		Version:  version(),
		UptimeMS: time.Since(s.ops.started).Milliseconds(),
		Config: admin.Config{
			Listen:      listen,
			OpsListen:   s.cfg.OpsListen,
			TLS:         s.cfg.TLSConfig != nil,
			MTLS:        s.mutualTLS(),
			ACLFile:     s.cfg.ACLFile,
			AuditLog:    s.cfg.AuditLog,
			IOTimeoutMS: s.cfg.IOTimeout.Milliseconds(),
		},
		Locks:    st.Locks,
		Sessions: st.Connections,
	}
}

// mutualTLS reports whether client certificates are required and verified.
func (s *Server) mutualTLS() bool {
	if s.ops.tls != nil {
		return s.ops.tls.MutualTLS()
	}
	c := s.cfg.TLSConfig
	return c != nil && c.ClientAuth == tls.RequireAndVerifyClientCert
}

func (s *Server) listenAddrs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	addrs := make([]string, 0, len(s.listeners))
	for l := range s.listeners {
		addrs = append(addrs, l.Addr().String())
	}
	slices.Sort(addrs)
	return addrs
}

// version is the module version and VCS revision the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += " " + s.Value
		}
	}
	return v
}
