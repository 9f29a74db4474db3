package postgres

import (
	"context"
	"fmt"
	"os"

	"github.com/monolock/monolock-bench/bench/backend/local"
)

// LocalServer is a PostgreSQL child process on 127.0.0.1.
type LocalServer struct {
	// Process is the postmaster; Process.Addr is its host:port.
	*local.Process
	// Install is the server that runs.
	Install Install
	// RunAs names the account the server runs as ("" for the bench's
	// own).
	RunAs string
	dir   string
}

// StartLocal makes a data directory with InitDB in a new temporary
// directory and starts postgres on a free 127.0.0.1 port with args
// appended (e.g. ServerArgs(TunedKeepalives...)), as user postgres (or
// nobody) when the bench runs as root, through setpriv, which keeps the
// parent-death signal; it returns once the server answers a query. Stop
// stops it and removes the directory.
func StartLocal(ctx context.Context, args ...string) (*LocalServer, error) {
	inst, err := FindServer(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "monolock-bench-postgres-")
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	fail := func(err error) (*LocalServer, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	data, err := InitDB(ctx, inst, dir)
	if err != nil {
		return fail(err)
	}
	addr, err := local.FreeAddr()
	if err != nil {
		return fail(err)
	}
	argv, name, err := command(inst, data, addr, args...)
	if err != nil {
		return fail(err)
	}
	p, err := local.StartProcess(ctx, Role, addr, argv[0], argv[1:]...)
	if err != nil {
		return fail(err)
	}
	s := &LocalServer{Process: p, Install: inst, RunAs: name, dir: dir}
	if err := WaitReady(ctx, addr); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop stops the server (SIGTERM: smart shutdown, then a kill after 5s)
// and removes its directory. Safe to call twice.
func (s *LocalServer) Stop() {
	s.Process.Stop(context.Background())
	os.RemoveAll(s.dir)
}
