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

	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/docker"
)

// ServerImage is the tag of the monolock server image users run (README:
// "Run the server"). It is labelled like every image of the project, so
// `make clean` removes it.
const ServerImage = "monolock-bench/monolock:latest"

// buildServerImage builds docker/monolock.Dockerfile on base (the bench's
// monolock image) and tags it ServerImage. The build reuses Docker's layer
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
		return "", fmt.Errorf("images: %s: %w", ServerImage, err)
	}
	defer api.Close()
	res, err := api.ImageBuild(ctx, &ctxTar, client.ImageBuildOptions{
		Tags:      []string{ServerImage},
		BuildArgs: map[string]*string{"BASE": &base.Ref},
		Labels:    map[string]string{engine.LabelProject: "1", engine.LabelSource: "docker/monolock.Dockerfile on " + base.Ref},
		Remove:    true,
	})
	if err != nil {
		return "", fmt.Errorf("images: build %s: %w", ServerImage, err)
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
			return ServerImage, nil
		} else if err != nil {
			return "", fmt.Errorf("images: build %s: reading the build output: %w", ServerImage, err)
		}
		if m.Error != "" {
			return "", fmt.Errorf("images: build %s: %s", ServerImage, m.Error)
		}
	}
}
