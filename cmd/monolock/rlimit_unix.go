//go:build unix

package main

import "syscall"

// raiseOpenFileLimit raises the soft NOFILE limit to the hard limit: the
// server's capacity is the file-descriptor limit. It returns the limit in
// force.
func raiseOpenFileLimit() (uint64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, err
	}
	if r.Cur >= r.Max {
		return r.Cur, nil
	}
	cur := r.Cur
	r.Cur = r.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return cur, err
	}
	return r.Max, nil
}
