package guardedstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// HTTP paths of the store's server.
const (
	// PathWrite takes a POSTed JSON Write and answers the JSON Entry.
	PathWrite = "/write"
	// PathRead takes a POSTed JSON Read and answers the JSON ReadResult.
	PathRead = "/read"
	// PathHistory answers GET with the JSON array of every Entry.
	PathHistory = "/history"
)

// maxBody bounds a request body; payloads are small markers.
const maxBody = 1 << 20

// Server serves a Store over HTTP on a TCP address. HTTP/1.1 keep-alive
// gives each client one warm connection, so a write costs one round trip.
type Server struct {
	// Store is the store the server decides writes with; the bench reads
	// the history from it directly.
	Store *Store

	ln  net.Listener
	srv *http.Server
	err chan error
}

// Listen starts a server for a new store on addr ("" is 127.0.0.1 on a
// free port; holders in containers need an address they can reach, such
// as the session network's gateway with port 0).
func Listen(addr string, fenced bool) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("guardedstore: listen: %w", err)
	}
	s := &Server{Store: NewStore(fenced), ln: ln, err: make(chan error, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathWrite, s.handleWrite)
	mux.HandleFunc("POST "+PathRead, s.handleRead)
	mux.HandleFunc("GET "+PathHistory, s.handleHistory)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { s.err <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server at once, closing client connections. The Store
// stays readable.
func (s *Server) Close() error {
	err := s.srv.Close()
	if serr := <-s.err; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

func (s *Server) handleWrite(w http.ResponseWriter, r *http.Request) {
	var wr Write
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wr); err != nil {
		http.Error(w, "bad write: "+err.Error(), http.StatusBadRequest)
		return
	}
	if wr.Client == "" || wr.Lock == "" {
		http.Error(w, "bad write: client and lock are required", http.StatusBadRequest)
		return
	}
	writeJSON(w, s.Store.Apply(wr))
}

func (s *Server) handleRead(w http.ResponseWriter, r *http.Request) {
	var rd Read
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rd); err != nil {
		http.Error(w, "bad read: "+err.Error(), http.StatusBadRequest)
		return
	}
	if rd.Client == "" || rd.Lock == "" {
		http.Error(w, "bad read: client and lock are required", http.StatusBadRequest)
		return
	}
	writeJSON(w, s.Store.Read(rd))
}

func (s *Server) handleHistory(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, s.Store.History())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v) // a failed write means the client left
}

// ErrRefused is wrapped by a Client's errors when the server answered
// with an error status (a malformed request): the request had no effect.
// Other errors are transport failures, whose effect is unknown.
var ErrRefused = errors.New("guardedstore: refused")

// Client talks to a Server. It is safe for concurrent use.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client for the server at addr (host:port). It
// keeps its connections warm between writes.
func NewClient(addr string) *Client {
	// An own transport: no proxy from the environment, and connections
	// that are not shared with anything else in the process.
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
	return &Client{base: "http://" + addr, hc: &http.Client{Transport: tr}}
}

// Write sends w and returns the store's decision. A rejected write is an
// Entry with Accepted false, not an error; errors are transport failures.
// Bound it with ctx.
func (c *Client) Write(ctx context.Context, w Write) (Entry, error) {
	body, err := json.Marshal(w)
	if err != nil {
		return Entry{}, fmt.Errorf("guardedstore: write: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+PathWrite, bytes.NewReader(body))
	if err != nil {
		return Entry{}, fmt.Errorf("guardedstore: write: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	var e Entry
	if err := c.do(req, &e); err != nil {
		return Entry{}, fmt.Errorf("guardedstore: write: %w", err)
	}
	return e, nil
}

// Read sends r and returns the store's decision. A rejected read is a
// ReadResult with Accepted false, not an error; errors are transport
// failures and refusals of a malformed request. Bound it with ctx.
func (c *Client) Read(ctx context.Context, r Read) (ReadResult, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return ReadResult{}, fmt.Errorf("guardedstore: read: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+PathRead, bytes.NewReader(body))
	if err != nil {
		return ReadResult{}, fmt.Errorf("guardedstore: read: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	var res ReadResult
	if err := c.do(req, &res); err != nil {
		return ReadResult{}, fmt.Errorf("guardedstore: read: %w", err)
	}
	return res, nil
}

// History fetches the server's whole history.
func (c *Client) History(ctx context.Context) ([]Entry, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+PathHistory, nil)
	if err != nil {
		return nil, fmt.Errorf("guardedstore: history: %w", err)
	}
	var h []Entry
	if err := c.do(req, &h); err != nil {
		return nil, fmt.Errorf("guardedstore: history: %w", err)
	}
	return h, nil
}

// Close drops the client's idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

func (c *Client) do(req *http.Request, v any) error {
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%w: %s: %s", ErrRefused, resp.Status, bytes.TrimSpace(msg))
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
