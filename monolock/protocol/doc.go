// Package protocol is the monolock wire format, version 1.
//
// A lock is a TCP (or TLS) connection. All integers are big-endian.
//
// Client → server:
//
//	ACQUIRE    0x01 · version u8 (=1) · lease_ms u32 · name_len u16 · name
//	HEARTBEAT  0x02
//
// Server → client:
//
//	WAITING    0x11
//	ACQUIRED   0x12 · token u64
//	ERROR      0x13 · code u8 · reason_len u8 · reason (UTF-8, may be empty)
//
// ACQUIRE is the first frame and is sent exactly once per connection. Every
// valid ACQUIRE or HEARTBEAT is answered with the session's current state
// (WAITING or ACQUIRED with the session's token); those answers are the
// heartbeat acknowledgements. A promotion is pushed as an unprompted
// ACQUIRED. After an ERROR the server closes the connection; closing the
// connection is the release.
//
// TCP is a stream: every reader here uses io.ReadFull and tolerates frames
// split across reads or coalesced into one.
//
// The package imports the standard library only.
package protocol
