//go:build !linux

package server

import (
	"errors"
	"net"
)

func enableFastOpen(net.Listener, int) error {
	return errors.New("TCP Fast Open on listeners is implemented for Linux only")
}

func kernelFastOpenServer() (bool, string) { return true, "" }
