package engine

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/moby/moby/client"

	"github.com/monolock/monolock-bench/bench/backend/clockshift"
	"github.com/monolock/monolock-bench/docker"
)

// ClockShiftFile is where the interposer in ClockShiftImage reads
// its offset; ShiftClock replaces it.
const ClockShiftFile = "/clockshift/offset"

// ClockShiftImage builds (or reuses) the host's p.Executable under the
// clockshift LD_PRELOAD interposer, for the clock-jump variant: the
// program and its libraries plus the interposer, compiled with the host's
// C compiler while the image is built (the scratch image has none), and an
// offset file holding 0. Start it with Session.Start (Cmd from the server
// spec) and make its clock jump with ShiftClock. It always packages the
// host's program (a registry image would need the library built for its
// own C library). Safe for concurrent use.
func ClockShiftImage(ctx context.Context, p ProgramImage) (Image, error) {
	rootfs, version, err := hostRootfs(ctx, p)
	if err != nil {
		return Image{}, err
	}
	dir, err := os.MkdirTemp("", "monolock-bench-clockshift-")
	if err != nil {
		return Image{}, fmt.Errorf("bench: clockshift image: %w", err)
	}
	defer os.RemoveAll(dir)
	lib, err := clockshift.Build(ctx, dir)
	if err != nil {
		return Image{}, err
	}
	so, err := os.ReadFile(lib)
	if err != nil {
		return Image{}, fmt.Errorf("bench: clockshift image: %w", err)
	}
	files := append([]ContextFile{
		{Name: "Dockerfile", Mode: 0o644, Content: []byte(docker.ClockShiftHost)},
		{Name: "rootfs/usr/lib/" + clockshift.LibName, Mode: 0o755, Content: so},
		{Name: "rootfs" + ClockShiftFile, Mode: 0o644, Content: clockshift.Format(0)},
	}, rootfs...)
	return ensureImage(ctx, p.Executable+"-clockshift", "host-"+p.Executable+" "+version+" + clockshift", files)
}

// ShiftClock makes the wall clock of a container from
// ClockShiftImage run d ahead of the host's (behind for a negative
// d), from the server's next clock read on, by replacing ClockShiftFile
// through the Docker API (a scratch image has no shell to exec). The
// host's clock, shared by all containers, is not touched.
func (c *Container) ShiftClock(ctx context.Context, d time.Duration) error {
	content := clockshift.Format(d)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: path.Base(ClockShiftFile), Mode: 0o644, Size: int64(len(content)), ModTime: time.Now()}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("bench: shift clock of %s: %w", c.Name, err)
	}
	if _, err := tw.Write(content); err != nil {
		return fmt.Errorf("bench: shift clock of %s: %w", c.Name, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("bench: shift clock of %s: %w", c.Name, err)
	}
	_, err := c.api.CopyToContainer(ctx, c.ID, client.CopyToContainerOptions{DestinationPath: path.Dir(ClockShiftFile), Content: &buf})
	if err != nil {
		return fmt.Errorf("bench: shift clock of %s: %w", c.Name, err)
	}
	return nil
}
