package scenarios

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
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/faults/holder"
)

// TestHandoverOnKubernetes runs the handover scenario on the local
// cluster (`make cluster`; skipped when none runs): monolock's server is a
// pod, and the holder runs in a client pod, where the crash, the freeze
// and the host loss reach it through the cluster's API. What the waiter
// sees tells them apart: a crashed holder's connection closes at once, a
// frozen or cut one ends only with its lease.
func TestHandoverOnKubernetes(t *testing.T) {
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
	// The holder's local relay is the bench's own program.
	bin := filepath.Join(t.TempDir(), "monolock-bench")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/monolock/monolock-bench/cmd/monolock-bench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	d, err := kubernetes.Start(ctx, []*bench.ServerSpec{monolock.Server}, kubernetes.Options{
		Kubeconfig: cluster.Kubeconfig(), Run: "handover" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36),
		Publish: func(ctx context.Context, ref string) (string, error) { return ref, cluster.Import(ctx, ref) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })

	const lease = 2 * time.Second
	cmd := holder.Command{Path: bin, Args: []string{"holder"}}
	res := runScenario(ctx, t, HandoverConfig{Holder: cmd, Trials: 2, FreezeTrials: 2}.Scenario(), []bench.Contender{monolock.Contender()}, d, lease)
	seen := map[string]bool{}
	for _, raw := range res.Raw {
		m := map[string]float64{}
		for _, x := range raw.Metrics {
			m[x.Name] = x.Value
		}
		if raw.Skipped != "" || m["failed"] != 0 {
			t.Errorf("%s: skipped %q, failed %v, errors %v", raw.Variant, raw.Skipped, m["failed"], raw.Errors)
			continue
		}
		seen[raw.Variant] = true
		p50 := time.Duration(m["p50"] * float64(time.Millisecond))
		t.Logf("%s: handover p50 %v", raw.Variant, p50)
		switch raw.Variant {
		case Crash:
			if p50 >= lease/2 {
				t.Errorf("crash: handover %v, want well below the lease: the pod's kernel closes the killed holder's connection", p50)
			}
		case Freeze, HostLoss:
			if p50 < lease/2 {
				t.Errorf("%s: handover %v, want at least %v: only the lease ends a silent holder", raw.Variant, p50, lease/2)
			}
		}
	}
	for _, v := range []string{Crash, Freeze, HostLoss} {
		if !seen[v] {
			t.Errorf("no %s figures", v)
		}
	}
}
