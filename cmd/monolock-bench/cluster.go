package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/monolock/monolock-bench/bench/backend/kubernetes/localcluster"
	"github.com/monolock/monolock-bench/bench/contenders/etcd"
)

const clusterUsage = `usage:
  monolock-bench cluster up       build (or reuse) Kubernetes ` + localcluster.Version + ` and start a single-node cluster on
                                  this machine (or find the one running); print its kubeconfig
  monolock-bench cluster down     stop it and remove everything it made, on the host too
  monolock-bench cluster status   say whether one is up
The cluster keeps its files in ` + localcluster.DefaultStateDir + `; up and down need root.
A first up builds the binaries into the user cache dir (15-25 min on two cores); later ones take about 15 s.
`

// clusterCommand manages the local Kubernetes cluster that the kubernetes
// backend's tests and users' `make cluster` run on.
func clusterCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, clusterUsage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "up":
		err = clusterUp(ctx, stdout)
	case "down":
		err = localcluster.Down(ctx, "", slog.Default())
		if err == nil {
			fmt.Fprintln(stdout, "cluster down")
		}
	case "status":
		c, ok, serr := localcluster.Running(ctx, "")
		err = serr
		if err == nil && ok {
			fmt.Fprintf(stdout, "cluster up since %s\nexport KUBECONFIG=%s\ncontainerd socket: %s\n",
				c.Started().Format(time.RFC3339), c.Kubeconfig(), c.ContainerdSocket())
		} else if err == nil {
			fmt.Fprintln(stdout, "no cluster is up")
		}
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, clusterUsage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "monolock-bench cluster: unknown command %q\n%s", args[0], clusterUsage)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "monolock-bench cluster: %v\n", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitFailure
	}
	return exitOK
}

// clusterUp builds what is missing, starts the cluster (or finds it) and
// prints how to use it, with the time each step took.
func clusterUp(ctx context.Context, stdout io.Writer) error {
	if c, ok, err := localcluster.Running(ctx, ""); err == nil && ok {
		fmt.Fprintf(stdout, "cluster already up since %s\nexport KUBECONFIG=%s\n", c.Started().Format(time.RFC3339), c.Kubeconfig())
		return nil
	}
	// Before a build that may take 20 minutes, not after it.
	if os.Geteuid() != 0 {
		return localcluster.ErrNotRoot
	}
	start := time.Now()
	bin, err := localcluster.Build(ctx, slog.Default())
	if err != nil {
		return err
	}
	etcdServer, err := etcd.BuildServer(ctx)
	if err != nil {
		return err
	}
	built := time.Since(start)
	start = time.Now()
	c, err := localcluster.Up(ctx, localcluster.Options{BinDir: bin, Etcd: etcdServer})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "binaries ready in %s (%s)\ncluster started in %s\ncontainerd socket: %s\nexport KUBECONFIG=%s\n",
		built.Round(time.Millisecond), bin, time.Since(start).Round(time.Millisecond), c.ContainerdSocket(), c.Kubeconfig())
	return nil
}
