// Package clockshift makes one process's wall clock jump without touching
// the host's: it builds the clockshift LD_PRELOAD interposer
// (docker/clockshift/clockshift.c) with the host's C compiler and writes
// the offset file the interposer reads on every clock call. A process
// started with Shift.Env sees CLOCK_REALTIME, CLOCK_REALTIME_COARSE,
// gettimeofday and time shifted by the offset; its monotonic clocks are
// untouched. Used for the clock-jump variant: Redis expires keys on the
// wall clock, so a step forward seen by one redis-server is the real fault.
//
// The interposer only reaches programs that read the clock through libc
// (redis-server, date); static Go binaries such as monolock read it
// through the vDSO and are not affected.
//
// It lives with the backends because a shift is applied where a server is
// started (the local backend's child process, the containers backend's
// image); a scenario asks a backend for a clock-shifted server and never
// imports this package.
package clockshift

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/monolock/monolock-bench/docker"
)

// FileEnv names the environment variable that tells the interposer which
// file holds the offset.
const FileEnv = "CLOCKSHIFT_FILE"

// LibName is the file name Build gives the library.
const LibName = "clockshift.so"

// compilerHint tells a user what to install when no C compiler is there.
const compilerHint = "install a C compiler and the C library headers (Debian/Ubuntu: apt-get install -y gcc libc6-dev) or set CC"

// Build compiles the interposer with the host's C compiler ($CC, else cc)
// into dir/clockshift.so and returns its path. It takes well under a
// second; callers build once per run into a temporary directory.
func Build(ctx context.Context, dir string) (string, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("clockshift: no C compiler %q: %s", cc, compilerHint)
	}
	src := filepath.Join(dir, "clockshift.c")
	if err := os.WriteFile(src, []byte(docker.ClockShiftC), 0o644); err != nil {
		return "", fmt.Errorf("clockshift: %w", err)
	}
	lib := filepath.Join(dir, LibName)
	// -O2 keeps the per-call cost small; -Wall makes a compiler that
	// disagrees with the source say so in the error.
	cmd := exec.CommandContext(ctx, cc, "-O2", "-Wall", "-fPIC", "-shared", "-o", lib, src)
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("clockshift: %s: %w\n%s(%s)", cmd, err, out, compilerHint)
	}
	return lib, nil
}

// Shift is one clock shift: the built library and the offset file of the
// process (or processes) started with its Env.
type Shift struct {
	// Lib is the interposer library.
	Lib string
	// File is the offset file the interposer reads.
	File string
}

// New builds the interposer into dir and creates an offset file there
// holding 0.
func New(ctx context.Context, dir string) (*Shift, error) {
	lib, err := Build(ctx, dir)
	if err != nil {
		return nil, err
	}
	s := &Shift{Lib: lib, File: filepath.Join(dir, "offset")}
	if err := s.Set(0); err != nil {
		return nil, err
	}
	return s, nil
}

// Env is what to add to a process's environment to run it under the
// shift.
func (s *Shift) Env() []string {
	return []string{"LD_PRELOAD=" + s.Lib, FileEnv + "=" + s.File}
}

// Set makes the shifted processes' wall clock run d ahead of the real one
// (behind for a negative d) from their next clock read on.
func (s *Shift) Set(d time.Duration) error { return WriteOffset(s.File, d) }

// Format is the offset file's content for d: nanoseconds with their unit.
func Format(d time.Duration) []byte {
	return []byte(strconv.FormatInt(d.Nanoseconds(), 10) + "ns\n")
}

// WriteOffset replaces the offset file at path with d, atomically (a new
// file renamed over the old), so a reader never sees a partial number.
func WriteOffset(path string, d time.Duration) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".offset-*")
	if err != nil {
		return fmt.Errorf("clockshift: %w", err)
	}
	_, werr := tmp.Write(Format(d))
	cerr := tmp.Close()
	// The shifted process may run as another user (a container's 65534).
	merr := os.Chmod(tmp.Name(), 0o644)
	if err := errors.Join(werr, cerr, merr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("clockshift: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("clockshift: %w", err)
	}
	return nil
}
