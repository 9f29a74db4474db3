package zookeeper

import (
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestSeam runs the contender through the seam on the ensemble its spec
// describes, as child processes and in containers (the peers named by
// the backends before any member starts).
func TestSeam(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble: not under -short (make test runs it)")
	}
	c := Contender()
	t.Run("local", func(t *testing.T) {
		benchtest.Contender(t, c, benchtest.Start(t, c.Server), time.Second, 4, 10)
	})
	t.Run("containers", func(t *testing.T) {
		benchtest.Contender(t, c, benchtest.StartContainers(t, c.Server), time.Second, 4, 10)
	})
}
