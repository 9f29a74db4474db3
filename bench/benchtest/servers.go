package benchtest

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/monolock/monolock-bench/bench/local"
)

// StartRedis starts a real redis-server child process for the test and
// stops it in t.Cleanup. Without redis-server on PATH the test is skipped,
// unless CI is set: in CI a missing server is a failure.
func StartRedis(t testing.TB) *local.Process {
	t.Helper()
	p, err := local.StartRedis(context.Background(), "redis", t.TempDir())
	if errors.Is(err, local.ErrNoRedisServer) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}
