package monolock

import (
	"crypto/tls"
	"net"
)

// closeAbortively closes a claim's connection with a reset (SO_LINGER 0)
// instead of a FIN handshake. The side that closes first keeps a TIME_WAIT
// entry for a minute, and that side is always the client here (closing is
// the release); at a few hundred claims per second to one server address a
// client host would run out of ephemeral ports. A reset releases the lock
// on the server exactly like a close, and nothing is left to deliver: the
// client never sends anything after its last heartbeat.
func closeAbortively(c net.Conn) error {
	raw := c
	if tc, ok := c.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	if tcp, ok := raw.(*net.TCPConn); ok {
		tcp.SetLinger(0)
	}
	return c.Close()
}
