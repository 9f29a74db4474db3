// Command images builds the project's Docker images, or removes
// everything the project created in Docker. `make images` and
// `make clean` run it.
//
//	go run ./docker/images build   # redis, monolock, tcp-floor; reused when unchanged
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
	"path/filepath"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/bench/containers"
)

// goImages are the servers the bench runs in containers, by name, main
// package (skipped when absent from the checkout) and builder.
var goImages = []struct {
	name, pkg string
	build     func(context.Context) (containers.Image, error)
	then      func(context.Context, containers.Image) (string, error) // optional: an image built on it
}{
	{"monolock", "./cmd/monolock", containers.MonolockImage, buildServerImage},
	{"tcp-floor", "./cmd/tcpfloor", containers.TCPFloorImage, nil},
}

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
		err = containers.RemoveAll(ctx)
		if errors.Is(err, containers.ErrNoEngine) {
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

func build(ctx context.Context) error {
	report := func(name string, start time.Time, img containers.Image) {
		state := "reused"
		if img.Built {
			state = "built"
		}
		fmt.Printf("%-10s %-48s %-7s %6.1fs  %s\n", name, img.Ref, state, time.Since(start).Seconds(), img.Source)
	}
	start := time.Now()
	img, err := containers.RedisImage(ctx)
	if err != nil {
		return err
	}
	report("redis", start, img)
	for _, g := range goImages {
		if _, err := os.Stat(filepath.FromSlash(g.pkg)); err != nil {
			fmt.Printf("%-10s skipped: %s is not in this checkout\n", g.name, g.pkg)
			continue
		}
		start := time.Now()
		img, err := g.build(ctx)
		if err != nil {
			return err
		}
		report(g.name, start, img)
		if g.then != nil {
			start := time.Now()
			ref, err := g.then(ctx, img)
			if err != nil {
				return err
			}
			fmt.Printf("%-10s %-48s %-7s %6.1fs  %s\n", "", ref, "tagged", time.Since(start).Seconds(), "docker/monolock.Dockerfile on "+img.Ref)
		}
	}
	return nil
}
