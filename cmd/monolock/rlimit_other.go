//go:build !unix

package main

import "errors"

// raiseOpenFileLimit is a no-op where there is no NOFILE limit to raise.
func raiseOpenFileLimit() (uint64, error) {
	return 0, errors.New("monolock: no NOFILE limit on this platform")
}
