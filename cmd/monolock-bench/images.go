package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/client"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/docker"
)

// serverImage is the tag of the monolock server image users run (README:
// "Run the server"). It is labelled like every image of the project, so
// `images clean` removes it.
const serverImage = "monolock-bench/monolock:latest"

const imagesUsage = `usage:
  monolock-bench images build   build (or reuse, when unchanged) the image of every server the contenders describe,
                                and tag the server image users run, ` + serverImage + `
  monolock-bench images clean   remove every container, network and image labelled org.monolock-bench=1
Run it from inside the module checkout: the Go images are built from its main packages.
`

// imagesCommand builds the project's Docker images or removes everything
// the project created in Docker. `make images` and `make clean` run it.
func imagesCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, imagesUsage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "build":
		err = buildImages(ctx, stdout)
	case "clean":
		err = engine.RemoveAll(ctx)
		if errors.Is(err, engine.ErrNoEngine) {
			// Without an engine there is nothing of ours to remove.
			fmt.Fprintln(stderr, "monolock-bench images: no Docker engine answers; nothing to remove")
			err = nil
		}
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, imagesUsage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "monolock-bench images: unknown command %q\n%s", args[0], imagesUsage)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "monolock-bench images: %v\n", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitFailure
	}
	return exitOK
}

// buildImages builds or finds the image of every server the contender
// table describes, as the containers backend does, and tags the monolock
// server image users run.
func buildImages(ctx context.Context, stdout io.Writer) error {
	specs, err := bench.Specs(contenderTable())
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
		fmt.Fprintf(stdout, "%-10s %-48s %-7s %6.1fs  %s\n", spec.Name, img.Ref, state, time.Since(start).Seconds(), img.Source)
		if spec == monolock.Server {
			start := time.Now()
			ref, err := buildServerImage(ctx, img)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%-10s %-48s %-7s %6.1fs  %s\n", "", ref, "tagged", time.Since(start).Seconds(), "docker/monolock.Dockerfile on "+img.Ref)
		}
	}
	return nil
}

// buildServerImage builds docker/monolock.Dockerfile on base (the bench's
// monolock image) and tags it serverImage. The build reuses Docker's layer
// cache, so an unchanged base costs a moment.
func buildServerImage(ctx context.Context, base engine.Image) (string, error) {
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(docker.Monolock)), ModTime: time.Unix(0, 0)}); err != nil {
		return "", err
	}
	if _, err := io.WriteString(tw, docker.Monolock); err != nil {
		return "", err
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	api, err := client.New(client.FromEnv)
	if err != nil {
		return "", fmt.Errorf("%s: %w", serverImage, err)
	}
	defer api.Close()
	res, err := api.ImageBuild(ctx, &ctxTar, client.ImageBuildOptions{
		Tags:      []string{serverImage},
		BuildArgs: map[string]*string{"BASE": &base.Ref},
		Labels:    map[string]string{engine.LabelProject: "1", engine.LabelSource: "docker/monolock.Dockerfile on " + base.Ref},
		Remove:    true,
	})
	if err != nil {
		return "", fmt.Errorf("build %s: %w", serverImage, err)
	}
	defer res.Body.Close()
	// The answer is a stream of JSON messages; a failed step is one with
	// an error.
	dec := json.NewDecoder(res.Body)
	for {
		var m struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return serverImage, nil
		} else if err != nil {
			return "", fmt.Errorf("build %s: reading the build output: %w", serverImage, err)
		}
		if m.Error != "" {
			return "", fmt.Errorf("build %s: %s", serverImage, m.Error)
		}
	}
}
