package benchtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
)

// RequireDocker skips the test under -short (a container test is slow),
// and when no Docker engine answers, unless CI is set: CI must run it.
func RequireDocker(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("container test: not under -short (make test runs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := engine.Ping(ctx); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("skipping container test: %v (CI is unset; with CI set this is a failure)", err)
		}
		t.Fatalf("CI is set but: %v", err)
	}
}
