// Command images builds the project's Docker images, or removes
// everything the project created in Docker. `make images` and
// `make clean` run it.
//
//	go run ./docker/images build   # every server the contenders describe; reused when unchanged
//	go run ./docker/images clean   # containers, networks and images labelled org.monolock-bench=1
//
// build also tags the server image users run, monolock-bench/monolock:latest
// (ServerImage): the bench's monolock image with its ports and environment
// declared (docker/monolock.Dockerfile).
//
// Run it from inside the module checkout: the Go images are built from
// its main packages.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/bench/contenders"
	monolocker "github.com/monolock/monolock-bench/bench/contenders/monolock"
)

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cmd := "build"
	if len(os.Args) > 1 {
		cmd = os.Args[1]
	}
	var err error
	switch cmd {
	case "build":
		err = build(ctx)
	case "clean":
		err = engine.RemoveAll(ctx)
		if errors.Is(err, engine.ErrNoEngine) {
			// Without an engine there is nothing of ours to remove.
			fmt.Fprintln(os.Stderr, "images: no Docker engine answers; nothing to remove")
			err = nil
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: images [build|clean]")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

// build builds or finds the image of every server the contender table
// describes, as the containers backend does.
func build(ctx context.Context) error {
	specs, err := bench.Specs(contenders.Table())
	if err != nil {
		return err
	}
	for _, spec := range specs {
		start := time.Now()
		img, err := containers.Image(ctx, spec)
		if err != nil {
			return err
		}
		state := "reused"
		if img.Built {
			state = "built"
		}
		fmt.Printf("%-10s %-48s %-7s %6.1fs  %s\n", spec.Name, img.Ref, state, time.Since(start).Seconds(), img.Source)
		if spec == monolocker.Server {
			start := time.Now()
			ref, err := buildServerImage(ctx, img)
			if err != nil {
				return err
			}
			fmt.Printf("%-10s %-48s %-7s %6.1fs  %s\n", "", ref, "tagged", time.Since(start).Seconds(), "docker/monolock.Dockerfile on "+img.Ref)
		}
	}
	return nil
}
