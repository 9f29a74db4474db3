// Command monolock-bench runs the benchmark suite that puts monolock,
// single-instance Redis SET NX and five-master Redlock side by side, and
// renders its results.
//
//	monolock-bench run     [--scenarios latency,throughput,...]
//	                       [--contenders monolock,redis,redlock,...]
//	                       [--backend containers|local|external|kubernetes] [--quick]
//	                       [--repetitions N] [--out DIR]
//	                       [--monolock-addr A] [--redis-addr A] [--redlock-addrs A,B,C,D,E]
//	                       [--workload NAME|FILE,...]
//	                       [--network PROFILE[,server=PROFILE...]] [--networks P1,P2,...]
//	monolock-bench report  DIR/results.json
//	monolock-bench compare A/results.json[,A2/results.json…] B/results.json[,…]
//	monolock-bench images  build|clean
//	monolock-bench cluster up|down|status
//
// Exit status: 0 success, 1 a failure while running, 2 bad usage, 130 when
// interrupted (partial results are kept and marked partial).
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/monolock/monolock-bench/bench/backend/kubernetes"
	"github.com/monolock/monolock-bench/bench/backend/kubernetes/podagent"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/network"
	"github.com/monolock/monolock-bench/redisbench"
)

const usage = `usage:
  monolock-bench run     [flags]            run the suite, write DIR/results.json, report.md, report.html
  monolock-bench report  DIR/results.json   re-render report.md and report.html beside results.json
  monolock-bench compare OLD NEW           per-figure deltas with significance, and whether every run's
                                            decision verdicts agree; OLD and NEW are each a results.json
                                            or several joined by commas (pooled for the deltas)
  monolock-bench images  build|clean        build the Docker images, or remove what the project created in Docker
  monolock-bench cluster up|down|status     a single-node Kubernetes cluster on this machine, built offline
Run "monolock-bench run -h" for the flags of run.
`

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	network.ChildMain() // the delay line and the namespace shim are this binary, re-executed
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(log)
	redisbench.LogTo(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one kills the process the default
	// way.
	go func() { <-ctx.Done(); stop() }()
	os.Exit(dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return runCommand(ctx, args[1:], stdout, stderr)
	case "report":
		return reportCommand(args[1:], stdout, stderr)
	case "compare":
		return compareCommand(args[1:], stdout, stderr)
	case "images":
		return imagesCommand(ctx, args[1:], stdout, stderr)
	case "cluster":
		return clusterCommand(ctx, args[1:], stdout, stderr)
	case "holder":
		// Hidden: the separate OS process that holds a lock in the
		// handover scenario, driven over stdin/stdout by the bench.
		if err := holder.Main(ctx, args[1:], contenderTable(), os.Stdin, stdout); err != nil {
			fmt.Fprintf(stderr, "monolock-bench holder: %v\n", err)
			return exitFailure
		}
		return exitOK
	case "workload-client":
		// Hidden: a client process of a workload whose clients are spread
		// over several (clients.processes), driven over stdin/stdout.
		if err := load.ChildMain(ctx, contenderTable(), os.Stdin, stdout); err != nil {
			fmt.Fprintf(stderr, "monolock-bench workload-client: %v\n", err)
			return exitFailure
		}
		return exitOK
	case "worker":
		// Hidden: one shard of a sharded scale variant, in a worker pod
		// of the kubernetes backend.
		if err := workerMain(ctx, args[1:], contenderTable(), stdout); err != nil {
			fmt.Fprintf(stderr, "monolock-bench worker: %v\n", err)
			return exitFailure
		}
		return exitOK
	case "kube-exec":
		// Hidden: the local relay of a program the kubernetes backend
		// runs in a client pod (a handover holder).
		return kubernetes.ExecMain(ctx, args[1:], os.Stdin, stdout, stderr)
	case "pod-agent":
		// Hidden: the supervisor in each server pod of the kubernetes
		// backend, and the command the bench execs there to reach it.
		if err := podagent.Main(ctx, args[1:], stdout, slog.Default()); err != nil {
			fmt.Fprintf(stderr, "monolock-bench pod-agent: %v\n", err)
			return exitFailure
		}
		return exitOK
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "monolock-bench: unknown command %q\n%s", args[0], usage)
		return exitUsage
	}
}
