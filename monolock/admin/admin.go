// Package admin is the monolock admin HTTP API: inspect live locks,
// force-release an owner, kick a waiter. It holds both the handler the
// server serves (server.Server.AdminHandler) and the JSON types of every
// answer, which clients such as monolockctl decode.
//
//	GET    /api/info
//	GET    /api/locks[?match=glob]
//	GET    /api/locks/{name}
//	POST   /api/locks/{name}/release
//	DELETE /api/locks/{name}/waiters/{remote_addr}
//
// Path segments are URL path-escaped (a lock name "jobs/nightly" arrives as
// "jobs%2Fnightly"); the handler routes on the escaped path and unescapes
// each segment itself, so any valid lock name, "." and ".." included, can be
// addressed. Serve the handler as the root of its own http.Server: a
// ServeMux in front would clean such paths and redirect.
//
// Responses are JSON in the documented shapes (Info, LockList, Lock);
// times are RFC 3339 with nanoseconds, UTC. A lock's detail and every
// entry of the list are the same Lock: name, holder (null when there is
// none) and waiters in queue order. Errors are {"error": "message"} with a
// 4xx/5xx status. The API has no authentication of its own.
package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/monolock/internal/glob"
	"github.com/monolock/monolock-bench/monolock/internal/locktable"
	"github.com/monolock/monolock-bench/monolock/protocol"
)

// Backend is what the admin API inspects and acts on; *server.Server
// implements it. Its methods must be safe for concurrent use.
type Backend interface {
	// Locks describes every live lock whose name satisfies match (all when
	// match is nil), sorted by name.
	Locks(match func(name string) bool) []locktable.Lock
	// Lock describes the named lock; ok is false when it is idle.
	Lock(name string) (l locktable.Lock, ok bool)
	// ForceRelease ends the named lock's ownership and returns its token,
	// or an error wrapping locktable.ErrNotHeld.
	ForceRelease(name string) (uint64, error)
	// Kick removes the named lock's waiter at remoteAddr, or returns an
	// error wrapping locktable.ErrNoSuchWaiter.
	Kick(name, remoteAddr string) error
}

// Info is the body of GET /api/info: version, uptime, effective
// configuration and live counts.
type Info struct {
	Version  string `json:"version"`
	UptimeMS int64  `json:"uptime_ms"`
	Config   Config `json:"config"`
	// Locks counts the live locks: those with an owner or waiters, as
	// listed by GET /api/locks.
	Locks int `json:"locks"`
	// Sessions counts the open protocol sessions (connections), owning,
	// queued or not yet past their ACQUIRE.
	Sessions int `json:"sessions"`
}

// Config is the effective configuration in Info.
type Config struct {
	Listen      string `json:"listen"`        // protocol address(es), comma-separated
	OpsListen   string `json:"ops_listen"`    // ops HTTP address; empty when off
	TLS         bool   `json:"tls"`           // TLS on the protocol port
	MTLS        bool   `json:"mtls"`          // client certificates required and verified
	ACLFile     string `json:"acl_file"`      // empty when authorization is off
	AuditLog    string `json:"audit_log"`     // a path, "-" for stdout, empty when off
	IOTimeoutMS int64  `json:"io_timeout_ms"` // -io-timeout in milliseconds
}

// Holder is the owner of a lock.
type Holder struct {
	Identity   string    `json:"identity"` // empty without mTLS
	RemoteAddr string    `json:"remote_addr"`
	Since      time.Time `json:"since"`
	LeaseMS    int64     `json:"lease_ms"`
	Token      uint64    `json:"token"`
}

// Waiter is a queued claim.
type Waiter struct {
	Identity   string    `json:"identity"` // empty without mTLS
	RemoteAddr string    `json:"remote_addr"`
	QueuedAt   time.Time `json:"queued_at"`
}

// Lock is one live lock: the body of GET /api/locks/{name} and an entry of
// GET /api/locks.
type Lock struct {
	Name    string   `json:"name"`
	Holder  *Holder  `json:"holder"`  // nil only while the server shuts down
	Waiters []Waiter `json:"waiters"` // in queue order; never null
}

// LockList is the body of GET /api/locks.
type LockList struct {
	Locks []Lock `json:"locks"` // sorted by name; never null
}

// Released is the body of a successful POST /api/locks/{name}/release.
type Released struct {
	Released bool   `json:"released"`
	Token    uint64 `json:"token"`
}

// Kicked is the body of a successful DELETE of a waiter.
type Kicked struct {
	Kicked bool `json:"kicked"`
}

// Error is the body of every error response.
type Error struct {
	Error string `json:"error"`
}

// handler serves the API.
type handler struct {
	b    Backend
	info func() Info
	log  *slog.Logger
}

// NewHandler returns the admin API over b. info is called for every GET
// /api/info. Administrative actions are logged to log at level info. The
// handler is safe for concurrent use.
func NewHandler(b Backend, info func() Info, log *slog.Logger) http.Handler {
	return &handler{b: b, info: info, log: log}
}

const locksPrefix = "/api/locks/"

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	switch {
	case path == "/api/info":
		if allow(w, r, http.MethodGet) {
			writeJSON(w, http.StatusOK, h.info())
		}
	case path == "/api/locks":
		if allow(w, r, http.MethodGet) {
			h.list(w, r)
		}
	case strings.HasPrefix(path, locksPrefix):
		h.lockRoute(w, r, strings.Split(path[len(locksPrefix):], "/"))
	default:
		writeError(w, http.StatusNotFound, "no such endpoint: "+path)
	}
}

// lockRoute dispatches /api/locks/{name}[/...] on the escaped segments.
func (h *handler) lockRoute(w http.ResponseWriter, r *http.Request, segs []string) {
	name, ok := segment(w, segs[0], "lock name")
	if !ok {
		return
	}
	if err := protocol.ValidateName(name); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	switch {
	case len(segs) == 1:
		if allow(w, r, http.MethodGet) {
			h.detail(w, name)
		}
	case len(segs) == 2 && segs[1] == "release":
		if allow(w, r, http.MethodPost) {
			h.release(w, r, name)
		}
	case len(segs) == 3 && segs[1] == "waiters":
		remote, ok := segment(w, segs[2], "remote address")
		if ok && allow(w, r, http.MethodDelete) {
			h.kick(w, r, name, remote)
		}
	default:
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.EscapedPath())
	}
}

// segment unescapes one path segment, answering 400 when it is malformed or
// empty.
func segment(w http.ResponseWriter, escaped, what string) (string, bool) {
	s, err := url.PathUnescape(escaped)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("malformed %s in path: %v", what, err))
		return "", false
	}
	if s == "" {
		writeError(w, http.StatusBadRequest, "empty "+what+" in path")
		return "", false
	}
	return s, true
}

func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed; use %s", r.Method, method))
	return false
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	var match func(string) bool
	if pattern := r.URL.Query().Get("match"); pattern != "" {
		match = func(name string) bool { return glob.Match(pattern, name) }
	}
	locks := h.b.Locks(match)
	out := LockList{Locks: make([]Lock, 0, len(locks))}
	for _, l := range locks {
		out.Locks = append(out.Locks, lockOf(l))
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) detail(w http.ResponseWriter, name string) {
	l, ok := h.b.Lock(name)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("lock %q is idle (no owner, no waiters)", name))
		return
	}
	writeJSON(w, http.StatusOK, lockOf(l))
}

func (h *handler) release(w http.ResponseWriter, r *http.Request, name string) {
	token, err := h.b.ForceRelease(name)
	switch {
	case errors.Is(err, locktable.ErrNotHeld):
		writeError(w, http.StatusNotFound, fmt.Sprintf("lock %q has no owner", name))
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
	default:
		h.log.Info("monolock: admin force-release", "lock", name, "token", token, "admin_remote", r.RemoteAddr)
		writeJSON(w, http.StatusOK, Released{Released: true, Token: token})
	}
}

func (h *handler) kick(w http.ResponseWriter, r *http.Request, name, remote string) {
	err := h.b.Kick(name, remote)
	switch {
	case errors.Is(err, locktable.ErrNoSuchWaiter):
		writeError(w, http.StatusNotFound, fmt.Sprintf("lock %q has no waiter at %s", name, remote))
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
	default:
		h.log.Info("monolock: admin kick", "lock", name, "waiter", remote, "admin_remote", r.RemoteAddr)
		writeJSON(w, http.StatusOK, Kicked{Kicked: true})
	}
}

func lockOf(l locktable.Lock) Lock {
	out := Lock{Name: l.Name, Holder: holder(l.Holder), Waiters: make([]Waiter, 0, len(l.Waiters))}
	for _, wt := range l.Waiters {
		out.Waiters = append(out.Waiters, Waiter{Identity: wt.Identity, RemoteAddr: wt.RemoteAddr, QueuedAt: wt.QueuedAt.UTC()})
	}
	return out
}

func holder(h *locktable.Holder) *Holder {
	if h == nil {
		return nil
	}
	return &Holder{Identity: h.Identity, RemoteAddr: h.RemoteAddr, Since: h.Since.UTC(), LeaseMS: h.Lease.Milliseconds(), Token: h.Token}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// An encoding error here can only be a write error: the client left.
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, Error{Error: msg})
}
