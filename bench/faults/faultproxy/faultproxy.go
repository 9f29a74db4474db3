// Package faultproxy puts a fault-injecting TCP proxy on each client's
// path to each server, for the safety and chaos scenarios: a path passes
// traffic, blackholes it (both directions dropped silently, nothing
// closed or reset: the peers see silence, as when a host drops off the
// network) or one direction only (a one-sided partition), is restored, or
// has its connections reset. A View gives one client its
// own paths to a list of servers, so that it can reach only a subset of
// them while other clients reach all.
//
// It embeds Shopify's toxiproxy (github.com/Shopify/toxiproxy/v2) in the
// bench process: its proxies and toxic chains, without its HTTP API. The
// blackhole is toxiproxy's "timeout" toxic with timeout 0 (data dropped
// until the toxic is removed), registered under its own name with one
// change: a peer's close is swallowed too, where toxiproxy's would pass it
// on as a FIN, which a lost host could not send.
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/rs/zerolog"
)

// blackholeType is the toxic type registered for the blackhole.
const blackholeType = "monolock_bench_blackhole"

func init() { toxics.Register(blackholeType, new(blackholeToxic)) }

// blackholeToxic drops every byte of its direction until it is removed,
// and swallows the end of the stream as well: the other peer sees neither
// data nor a close. Removing it (Restore) ends the connection: bytes were
// lost, so the stream could not go on meaningfully.
type blackholeToxic struct{}

// Pipe implements toxics.Toxic.
func (blackholeToxic) Pipe(stub *toxics.ToxicStub) {
	in := stub.Input
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-in:
			if c == nil {
				// The source closed: keep silent rather than pass
				// the close on; the link ends when the toxic goes.
				in = nil
			}
			// Drop the data on the ground.
		}
	}
}

// Cleanup implements toxics.CleanupToxic: closing the stub ends the
// connection when the toxic is removed.
func (blackholeToxic) Cleanup(stub *toxics.ToxicStub) { stub.Close() }

// State is what a Link does to its traffic.
type State string

// States of a Link.
const (
	Pass      State = "pass"
	Blackhole State = "blackhole"
	// BlackholeUp drops the client's traffic to the server only;
	// BlackholeDown the server's to the client only.
	BlackholeUp   State = "blackhole-upstream"
	BlackholeDown State = "blackhole-downstream"
)

// Proxy holds the links of one run. Its methods are safe for concurrent
// use.
type Proxy struct {
	srv *toxiproxy.ApiServer

	mu     sync.Mutex
	links  []*Link
	closed bool
}

// New returns an empty Proxy. Close it to stop its links.
func New() *Proxy {
	// Nothing is logged: the bench reports faults itself.
	return &Proxy{srv: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())}
}

// Link is one path: a listener on 127.0.0.1 forwarding every connection
// to Upstream through the toxic chain. Its methods are safe for
// concurrent use.
type Link struct {
	// Name identifies the path ("A->redis-3").
	Name string
	// Upstream is the server's host:port.
	Upstream string

	tp *toxiproxy.Proxy

	mu sync.Mutex
	// holes are the directions blackholed now.
	holes map[string]bool
}

// Link starts a path named name to upstream, listening on a free
// loopback port (Addr).
func (p *Proxy) Link(name, upstream string) (*Link, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("faultproxy: proxy closed")
	}
	tp := toxiproxy.NewProxy(p.srv, name, "127.0.0.1:0", upstream)
	if err := tp.Start(); err != nil {
		return nil, fmt.Errorf("faultproxy: link %s: %w", name, err)
	}
	l := &Link{Name: name, Upstream: upstream, tp: tp, holes: map[string]bool{}}
	p.links = append(p.links, l)
	return l, nil
}

// Close stops every link, closing their connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	links := p.links
	p.links, p.closed = nil, true
	p.mu.Unlock()
	var errs []error
	for _, l := range links {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

// Addr is the host:port clients dial instead of Upstream.
func (l *Link) Addr() string {
	l.tp.Lock()
	defer l.tp.Unlock()
	return l.tp.Listen
}

// State reports whether the link passes or blackholes traffic, and in
// which directions.
func (l *Link) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch up, down := l.holes[upstream], l.holes[downstream]; {
	case up && down:
		return Blackhole
	case up:
		return BlackholeUp
	case down:
		return BlackholeDown
	}
	return Pass
}

// The directions of a toxiproxy link: client→server and server→client.
const (
	upstream   = "upstream"
	downstream = "downstream"
)

var directions = []string{upstream, downstream}

// Blackhole drops all traffic of the link's connections, in both
// directions, from now on, without closing or resetting anything: reads
// wait, writes are swallowed, closes are not passed on. New connections
// are still accepted by the link's listener (and dialed upstream) but see
// the same silence; a lost host would not answer the handshake at all, so
// clients see a read timeout where they might have seen a connect timeout.
// Blackholing a blackholed link does nothing; on a link blackholed one
// way it adds the other direction.
func (l *Link) Blackhole() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.blackholeLocked(directions...)
}

// BlackholeUpstream drops the client's traffic to the server from now on
// and lets the server's through: the server hears nothing (no renewals,
// no release), the client still hears what the server sends. As with
// Blackhole, nothing is closed or reset, and Restore ends the connections
// that lived through it. On a blackholed link it does nothing.
func (l *Link) BlackholeUpstream() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.blackholeLocked(upstream)
}

// BlackholeDownstream drops the server's traffic to the client from now
// on and lets the client's through: the server hears the client's
// renewals, the client hears no answers. Otherwise as BlackholeUpstream.
func (l *Link) BlackholeDownstream() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.blackholeLocked(downstream)
}

func (l *Link) blackholeLocked(dirs ...string) error {
	for _, dir := range dirs {
		if l.holes[dir] {
			continue
		}
		spec := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":{}}`, blackholeType+"_"+dir, blackholeType, dir)
		if _, err := l.tp.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
			return fmt.Errorf("faultproxy: blackhole %s %s: %w", l.Name, dir, err)
		}
		l.holes[dir] = true
	}
	return nil
}

// Restore makes the link pass traffic again, both ways. Connections that
// lived through a blackhole (of either direction) end now (closed, as a
// FIN to both peers): their lost bytes leave nothing to resume. New
// connections pass. Restoring a passing link does nothing.
func (l *Link) Restore() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.restoreLocked()
}

func (l *Link) restoreLocked() error {
	var errs []error
	for _, dir := range directions {
		if !l.holes[dir] {
			continue
		}
		err := l.tp.Toxics.RemoveToxic(context.Background(), blackholeType+"_"+dir)
		if err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
			errs = append(errs, err)
			continue
		}
		delete(l.holes, dir)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("faultproxy: restore %s: %w", l.Name, err)
	}
	return nil
}

// Reset ends every current connection of the link at once, on both
// sides (the sockets are closed: a FIN, or a reset where unread data
// waits), the way a crashed process's kernel ends its connections, and
// keeps listening on the same address. The link's state stays: a
// blackholed link (either way) is blackholed again for the connections
// that follow.
func (l *Link) Reset() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var was []string
	for _, dir := range directions {
		if l.holes[dir] {
			was = append(was, dir)
		}
	}
	// Remove the blackhole first: it would keep the closed connections'
	// goroutines waiting for a restore that no longer comes.
	if err := l.restoreLocked(); err != nil {
		return err
	}
	// Stop closes the listener and every connection; Start listens again
	// on the same port (toxiproxy kept the address it first bound).
	l.tp.Stop()
	if err := l.tp.Start(); err != nil {
		return fmt.Errorf("faultproxy: reset %s: %w", l.Name, err)
	}
	return l.blackholeLocked(was...)
}

// Close restores the link (so nothing waits on a blackhole) and stops it,
// closing its connections and its listener.
func (l *Link) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.restoreLocked()
	l.tp.Stop()
	return err
}

// View is one client's own paths to a list of servers: Addrs[i] reaches
// server i through a Link that only this client uses, so its faults touch
// no other client.
type View struct {
	// Client names the client ("A").
	Client string
	// Links are the client's paths, one per server, in order.
	Links []*Link
}

// View starts one link per upstream for client, named "client->upstream".
func (p *Proxy) View(client string, upstreams []string) (*View, error) {
	v := &View{Client: client}
	for _, up := range upstreams {
		l, err := p.Link(client+"->"+up, up)
		if err != nil {
			for _, l := range v.Links {
				_ = l.Close()
			}
			return nil, err
		}
		v.Links = append(v.Links, l)
	}
	return v, nil
}

// Addrs are the addresses the client dials, one per server.
func (v *View) Addrs() []string {
	addrs := make([]string, len(v.Links))
	for i, l := range v.Links {
		addrs[i] = l.Addr()
	}
	return addrs
}

// ReachOnly lets the client reach only the servers at the given indexes:
// the other paths are blackholed, these restored.
func (v *View) ReachOnly(servers ...int) error {
	reach := make([]bool, len(v.Links))
	for _, i := range servers {
		if i < 0 || i >= len(v.Links) {
			return fmt.Errorf("faultproxy: %s has no server %d (it has %d)", v.Client, i, len(v.Links))
		}
		reach[i] = true
	}
	var errs []error
	for i, l := range v.Links {
		if reach[i] {
			errs = append(errs, l.Restore())
		} else {
			errs = append(errs, l.Blackhole())
		}
	}
	return errors.Join(errs...)
}

// ReachAll restores every path of the client.
func (v *View) ReachAll() error {
	var errs []error
	for _, l := range v.Links {
		errs = append(errs, l.Restore())
	}
	return errors.Join(errs...)
}
