package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/kubernetes"
	"github.com/monolock/monolock-bench/bench/backend/kubernetes/localcluster"
)

// startKubernetes starts the servers of specs on the cluster of
// kubeconfig ("" means the local cluster of `make cluster` when it runs,
// else $KUBECONFIG or ~/.kube/config). The images reach the node by
// import into its runtime, which only the local cluster offers here.
func startKubernetes(ctx context.Context, specs []*bench.ServerSpec, run, kubeconfig string, log *slog.Logger) (*kubernetes.Deployment, error) {
	local, up, err := localcluster.Running(ctx, "")
	if err != nil {
		return nil, err
	}
	if up && kubeconfig == "" {
		kubeconfig = local.Kubeconfig()
	}
	if !up || !sameFile(kubeconfig, local.Kubeconfig()) {
		return nil, errors.New("kubernetes backend: the bench can put its images only on the local cluster of `make cluster` (imported into its node's containerd), which does not run or is not the one --kubeconfig names; a cluster that pulls from a registry is not supported yet")
	}
	log.Info("monolock-bench: kubernetes backend", "kubeconfig", kubeconfig, "api", local.Server())
	d, err := kubernetes.Start(ctx, specs, kubernetes.Options{
		Kubeconfig: kubeconfig, Run: run, Log: log, BenchHost: local.BenchHost(),
		Publish: func(ctx context.Context, ref string) (string, error) { return ref, local.Import(ctx, ref) },
	})
	if err != nil {
		return nil, fmt.Errorf("kubernetes backend: %w", err)
	}
	return d, nil
}

// sameFile says whether a and b name one file.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(sa, sb)
}
