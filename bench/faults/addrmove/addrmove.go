// Package addrmove is the one address of an active–passive pair: a TCP
// forwarder that clients dial instead of a server, and that a failover
// moves from the primary to the standby.
//
// It is a proxy, not a kernel address move: Move switches the target of
// new connections and, with the fence, cuts every established one off its
// old server (nothing the server sends reaches the client any more) and
// resets the client's side (an RST) as a virtual IP taken over breaks each
// session to a lost host when the session's next packet reaches the new
// holder: at once where the client waits for an answer (in a takeover its
// unanswered segment is sent again, within its retransmission timeout,
// and reset), else at the client's next segment. Without the fence it
// keeps them, as a DNS or load-balancer switch keeps established
// connections to a live backend.
package addrmove

import (
	"net"
	"sync"
	"sync/atomic"
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
// fenced is set, under the Mover's lock, by a fenced move; waiting says
// the client sent bytes the server has not answered yet.
type pair struct {
	client, server net.Conn
	fenced         bool
	waiting        atomic.Bool
}

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

// Move forwards new connections to target from now on. With fence it cuts
// every established connection off its server, resets those whose client
// waits for an answer and leaves the others to be reset at their client's
// next segment, and returns how many it cut; without, the established
// connections keep their server.
func (m *Mover) Move(target string, fence bool) int {
	m.mu.Lock()
	m.target = target
	var cut []*pair
	if fence {
		m.fences++
		for p := range m.pairs {
			if !p.fenced {
				p.fenced = true
				cut = append(cut, p)
			}
		}
	}
	m.mu.Unlock()
	for _, p := range cut {
		if p.waiting.Load() {
			p.reset()
		} else {
			_ = p.server.Close()
		}
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
	go func() { relay(s, c, func() { p.waiting.Store(true) }); done <- struct{}{} }()
	go func() { relay(c, s, func() { p.waiting.Store(false) }); done <- struct{}{} }()
	<-done
	m.mu.Lock()
	fenced := p.fenced
	m.mu.Unlock()
	if fenced {
		// The server's side was cut at the move: a client that waited
		// was reset then, the others learn when they next send (or
		// close), as their next packet to a taken-over address meets the
		// new holder's reset.
		<-done
	}
	m.mu.Lock()
	delete(m.pairs, p)
	m.mu.Unlock()
	// One side ended: end the other the way the ending side did (a
	// reset propagates as a reset, which is what the client sees of a
	// server killed or of a link gone).
	p.reset()
	if !fenced {
		<-done
	}
}

// relay copies src to dst until either side ends, calling read after each
// read from src.
func relay(dst, src net.Conn, read func()) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			read()
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
