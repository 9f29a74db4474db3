// Package addrmove is the one address of an active–passive pair: a TCP
// forwarder that clients dial instead of a server, and that a failover
// moves from the primary to the standby.
//
// It is a proxy, not a kernel address move: Move switches the target of
// new connections and, with the fence, resets every established one (the
// client side with an RST, the server side closed), as taking a virtual
// IP away breaks the sessions to the old host. Without the fence it keeps
// them, as a DNS or load-balancer switch keeps established connections to
// a live backend.
package addrmove

import (
	"io"
	"net"
	"sync"
)

// Mover forwards every connection to its current target. Its methods are
// safe for concurrent use.
type Mover struct {
	ln net.Listener

	mu     sync.Mutex
	target string
	// fences counts the fenced moves: a connection whose dial a fence
	// overtook belongs to the old side.
	fences int
	closed bool
	pairs  map[*pair]struct{}
	wg     sync.WaitGroup
}

// pair is one forwarded connection: the client's and the server's side.
type pair struct{ client, server net.Conn }

// reset ends both sides: the client's with an RST (no FIN, as a host that
// no longer has the address answers), the server's closed.
func (p *pair) reset() {
	if tc, ok := p.client.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = p.client.Close()
	_ = p.server.Close()
}

// Listen starts a Mover on a free port of 127.0.0.1 forwarding to target.
func Listen(target string) (*Mover, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &Mover{ln: ln, target: target, pairs: map[*pair]struct{}{}}
	m.wg.Go(m.accept)
	return m, nil
}

// Addr is the address clients dial.
func (m *Mover) Addr() string { return m.ln.Addr().String() }

// Target is the server new connections are forwarded to.
func (m *Mover) Target() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.target
}

// Move forwards new connections to target from now on. With fence it
// resets every established connection and returns how many; without, the
// established connections keep their server.
func (m *Mover) Move(target string, fence bool) int {
	m.mu.Lock()
	m.target = target
	var cut []*pair
	if fence {
		m.fences++
		for p := range m.pairs {
			cut = append(cut, p)
			delete(m.pairs, p)
		}
	}
	m.mu.Unlock()
	for _, p := range cut {
		p.reset()
	}
	return len(cut)
}

// Established is the number of connections forwarded now.
func (m *Mover) Established() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pairs)
}

// Close stops listening and resets every connection.
func (m *Mover) Close() error {
	err := m.ln.Close()
	m.mu.Lock()
	m.closed = true
	pairs := m.pairs
	m.pairs = map[*pair]struct{}{}
	m.mu.Unlock()
	for p := range pairs {
		p.reset()
	}
	m.wg.Wait()
	return err
}

func (m *Mover) accept() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			return
		}
		// The target is the one at the accept, as close to the
		// client's connect as the forwarder can see it.
		m.mu.Lock()
		target, fences := m.target, m.fences
		m.mu.Unlock()
		m.wg.Go(func() { m.forward(c, target, fences) })
	}
}

// forward dials target for client c and copies both ways
// until either side ends. A target that refuses or cannot be reached
// closes the client's connection with an RST, as a refused dial would.
func (m *Mover) forward(c net.Conn, target string, fences int) {
	s, err := net.Dial("tcp", target)
	if err != nil {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
		return
	}
	p := &pair{client: c, server: s}
	m.mu.Lock()
	if m.closed || m.fences != fences {
		// Closed or fenced since the accept: this connection belongs to
		// the old target's side of the move.
		m.mu.Unlock()
		p.reset()
		return
	}
	m.pairs[p] = struct{}{}
	m.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src) // either side's end ends the pair
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done
	m.mu.Lock()
	delete(m.pairs, p)
	m.mu.Unlock()
	// One side ended: end the other the way the ending side did (a
	// reset propagates as a reset, which is what the client sees of a
	// server killed or of a link gone).
	p.reset()
	<-done
}
