//go:build !linux

package monolock

import "syscall"

// fastOpenControl does nothing: the client dials with TCP Fast Open on
// Linux only, and connects the usual way elsewhere.
func fastOpenControl(_, _ string, _ syscall.RawConn) error { return nil }
