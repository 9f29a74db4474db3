package benchtest

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/local"
)

// Start starts the servers of specs as local child processes for the test
// and stops them in t.Cleanup. When a spec's executable is not on PATH
// the test is skipped, unless CI is set: in CI a missing server is a
// failure.
func Start(t testing.TB, specs ...*bench.ServerSpec) *local.Deployment {
	t.Helper()
	d, err := local.Start(context.Background(), specs, nil)
	if errors.Is(err, local.ErrNoExecutable) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
