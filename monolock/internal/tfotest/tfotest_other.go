//go:build !linux

// Package tfotest lets tests exercise TCP Fast Open on loopback; TFO is
// tested on Linux only, and Enter skips elsewhere.
package tfotest

import (
	"errors"
	"net"
	"testing"
)

var errNotLinux = errors.New("tfotest: TCP Fast Open is tested on Linux only")

// Setting reports that there is no net.ipv4.tcp_fastopen here.
func Setting() (int, error) { return 0, errNotLinux }

// Enter skips the test.
func Enter(t *testing.T) bool {
	t.Helper()
	t.Skip(errNotLinux)
	return false
}

// Counter is not available here.
func Counter(string) (int64, error) { return 0, errNotLinux }

// SynData is not available here.
func SynData(net.Conn) (bool, error) { return false, errNotLinux }
