// Package monolock is the Go client of the monolock lock service.
//
// A lock is a name; a claim is one TCP (or TLS) connection. Acquire dials,
// sends ACQUIRE and waits in the server's FIFO queue until it is granted;
// the returned Lock carries the fencing token of the grant and keeps the
// session alive with heartbeats until Release closes the connection, which
// is the release. There is no release message and no hold limit: the lease
// is how long the server tolerates silence, not how long the lock is held.
// The connection is closed with a reset (SO_LINGER 0), so a client that
// makes many short claims leaves no TIME_WAIT sockets behind.
//
// The client is the pessimist. When no frame has confirmed the session for
// 0.8 × lease (the ACQUIRE handshake included), it closes the connection
// and reports the lock lost (Lock.Done, Lock.Err) before the server can
// expire it and grant it to someone else. A frame that arrives later than
// that (after the process was stopped, say) does not revive the session:
// it is lost before the frame is read, so a grant read late is not
// reported. The fencing token is what makes
// the remaining window safe: hand it to the resource you protect and have
// the resource reject tokens lower than the highest it has seen.
//
// Most callers want Do or DoRetry, which acquire, run a function with the
// token and a context that is cancelled the moment ownership is not
// confirmed, and release when the function returns or panics:
//
//	c := monolock.New(monolock.Config{Address: "locks.internal:7070"})
//	err := c.Do(ctx, "jobs/nightly", 10*time.Second, func(ctx context.Context, token uint64) error {
//		return store.WriteFenced(ctx, token, data)
//	})
//
// New does not dial and does not fail; a Config that cannot work (an empty
// Address) is reported by every Acquire, Do and DoRetry as an error
// wrapping ErrInvalidConfig.
//
// One round trip: a claim on a new connection waits for the TCP handshake
// (and the TLS handshake: one more round trip with TLS 1.3, two with TLS
// 1.2) before its ACQUIRE leaves. Two opt-in settings take that
// off the critical path while keeping one connection per claim and the
// protocol unchanged:
//
//   - Config.Spares keeps connections dialled in advance (TLS handshake
//     done), so a claim costs one round trip. Use it for latency-sensitive
//     claims, above all against a TLS server, where a handshake costs
//     more round trips and public-key work on both sides. Each spare is an
//     idle connection and a file descriptor on the server and on the
//     client, renewed every Config.SpareMaxAge (default 3s, below the
//     server's io-timeout): N spares cost N descriptors and N dials every
//     SpareMaxAge even when no claim is made. A Client with spares must be
//     closed.
//   - Config.TCPFastOpen sends the ACQUIRE (or the ClientHello) in the SYN
//     once a cookie is cached, saving one round trip on each claim's own
//     connection with nothing held idle. It needs the server's
//     -tcp-fastopen and the kernel's consent on both hosts, falls back to
//     a normal handshake otherwise, and a replayed SYN can cost a phantom
//     claim for about one round trip (see server.Config.TCPFastOpen).
//
// Heartbeats: every session (queued or owning) sends a HEARTBEAT every
// interval = clamp(0.8 × lease − 2 × EWMA(RTT), 100ms, lease/4) (alpha
// 0.2), with at most one heartbeat unanswered; the interval is measured
// between sends. The round trip is taken from the 0.8 × lease give-up,
// not from lease/4, so the interval is lease/4 until the RTT reaches
// 0.275 × lease (550ms at a 2s lease) and shortens beyond that only as far
// as a confirmation before 0.8 × lease needs: a loaded machine's longer
// round trips do not make every client send more often. The 100ms floor applies to leases of 400ms and more. For a lease
// under 400ms, lease/4 is itself under the floor and wins: the interval is
// exactly lease/4, because a 100ms interval could never keep such a lease
// alive (the client gives up after 0.8 × lease, under 320ms, and the
// server after the lease).
//
// Errors: before the function runs, Do returns exactly the error that
// occurred. A Config that cannot work wraps ErrInvalidConfig. Invalid
// names and leases are reported before dialling as the protocol's errors
// (protocol.ErrEmptyName, protocol.ErrNameTooLong, protocol.ErrInvalidName,
// protocol.ErrInvalidLease). A dial error and a connection error (such as
// a reset, or io.EOF when the server closes without an ERROR frame) are
// returned unchanged. An ERROR frame from the server is a *ServerError,
// which matches the protocol's canonical error of its code under errors.Is
// and reports Temporary by code range. A session lost after the grant
// (Lock.Err, and joined into Do's result) is ErrHeartbeatTimeout,
// ErrConnectionClosed (which also wraps the connection's error) or
// ErrProtocolViolation, or a *ServerError.
package monolock
