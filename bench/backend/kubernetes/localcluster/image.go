package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
)

// pauseImageName is the Docker image of the pause program:
// monolock-bench/kubernetes-pause:<content hash>.
const pauseImageName = "kubernetes-pause"

// pauseDockerfile runs the static pause program alone.
const pauseDockerfile = "FROM scratch\nCOPY pause /pause\nENTRYPOINT [\"/pause\"]\n"

// Import copies the image ref from the Docker engine into the node's
// containerd (namespace ImageNamespace), under the same name, so that a
// pod with that image and imagePullPolicy Never starts: ref
// "monolock-bench/etcd:abc" is the pod's image "monolock-bench/etcd:abc"
// (both are docker.io/monolock-bench/etcd:abc in full). It streams
// `docker save` into `ctr images import`; an image already there is
// replaced.
func (c *Cluster) Import(ctx context.Context, ref string) error {
	start := time.Now()
	save := exec.CommandContext(ctx, "docker", "save", ref)
	imp := exec.CommandContext(ctx, c.info.Ctr, "--address", c.l.containerdSocket(), "--namespace", ImageNamespace,
		"images", "import", "-")
	pipe, err := save.StdoutPipe()
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	imp.Stdin = pipe
	var saveErr, impErr bytes.Buffer
	save.Stderr, imp.Stderr, imp.Stdout = &saveErr, &impErr, &impErr
	if err := save.Start(); err != nil {
		return fmt.Errorf("localcluster: docker save %s: %w", ref, err)
	}
	ierr := imp.Run()
	serr := save.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if serr != nil {
		return fmt.Errorf("localcluster: docker save %s: %w: %s", ref, serr, strings.TrimSpace(saveErr.String()))
	}
	if ierr != nil {
		return fmt.Errorf("localcluster: ctr images import %s: %w: %s", ref, ierr, strings.TrimSpace(impErr.String()))
	}
	c.log.Info("localcluster: imported image", "image", ref, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// importSandboxImage builds the pause image in the Docker engine (once
// per content), imports it and names it SandboxImage, the image
// containerd starts every pod's sandbox from and cannot pull here.
func (c *Cluster) importSandboxImage(ctx context.Context, binDir string) error {
	pause, err := os.ReadFile(filepath.Join(binDir, pauseBinary))
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	files := []engine.ContextFile{
		{Name: "Dockerfile", Mode: 0o644, Content: []byte(pauseDockerfile)},
		{Name: "pause", Mode: 0o755, Content: pause},
	}
	tag, err := engine.ContentTag(files)
	if err != nil {
		return err
	}
	img, err := engine.EnsureImage(ctx, pauseImageName, tag, "build pause.c of k8s.io/kubernetes@"+Version,
		func(context.Context) ([]engine.ContextFile, error) { return files, nil })
	if err != nil {
		return err
	}
	if err := c.Import(ctx, img.Ref); err != nil {
		return err
	}
	_, err = runCtr(ctx, c.info.Ctr, c.l, "images", "tag", "--force", "docker.io/"+img.Ref, SandboxImage)
	return err
}
