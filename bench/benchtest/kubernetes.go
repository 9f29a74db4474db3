package benchtest

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/kubernetes"
	"github.com/monolock/monolock-bench/bench/backend/kubernetes/localcluster"
)

// StartKubernetes starts the servers of specs as pods of the local
// cluster (`make cluster`), in a namespace of the test's own, and removes
// them in t.Cleanup. It skips under -short and when no such cluster runs.
func StartKubernetes(t testing.TB, specs ...*bench.ServerSpec) *kubernetes.Deployment {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a Kubernetes cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cluster, up, err := localcluster.Running(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !up {
		t.Skip("no local cluster runs (make cluster)")
	}
	d, err := kubernetes.Start(ctx, specs, kubernetes.Options{
		Kubeconfig: cluster.Kubeconfig(), Run: "test" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36), BenchHost: cluster.BenchHost(),
		Publish: func(ctx context.Context, ref string) (string, error) { return ref, cluster.Import(ctx, ref) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// BenchProgram builds the bench's own program (cmd/monolock-bench) for
// the test and returns its path: the local relay of a program the
// kubernetes backend runs in a client pod.
func BenchProgram(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "monolock-bench")
	build := exec.Command("go", "build", "-o", bin, "github.com/monolock/monolock-bench/cmd/monolock-bench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
