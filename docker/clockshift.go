package docker

import _ "embed"

// ClockShiftC is the C source of the clockshift LD_PRELOAD interposer,
// which shifts one process's wall clock by an offset read from a file
// (see bench/backend/clockshift). It lives in its own directory, with no Go
// files, so that `go build` does not try to compile it as cgo.
//
//go:embed clockshift/clockshift.c
var ClockShiftC string

// ClockShiftHost is the Dockerfile for a host program under the clockshift
// interposer: the program and its libraries, the library and its offset
// file, all under rootfs/ in the context.
//
//go:embed clockshift/host.Dockerfile
var ClockShiftHost string
