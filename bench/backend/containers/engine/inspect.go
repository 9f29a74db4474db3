package engine

import (
	"context"
	"fmt"
	"io"
)

// ImageRuntime is what an image sets for the process of a container made
// from it, for a runtime other than the engine (the kubernetes backend)
// that starts the image's program itself.
type ImageRuntime struct {
	Entrypoint, Cmd []string
	// User is the image's USER ("65534:65534"), "" for root.
	User string
}

// InspectImage reads ref's runtime settings from the engine.
func InspectImage(ctx context.Context, ref string) (ImageRuntime, error) {
	p, err := healthyProvider(ctx)
	if err != nil {
		return ImageRuntime{}, err
	}
	defer p.Close()
	img, err := p.Client().ImageInspect(ctx, ref)
	if err != nil {
		return ImageRuntime{}, fmt.Errorf("bench: inspect image %s: %w", ref, err)
	}
	if img.Config == nil {
		return ImageRuntime{}, nil
	}
	return ImageRuntime{Entrypoint: img.Config.Entrypoint, Cmd: img.Config.Cmd, User: img.Config.User}, nil
}

// SaveImage writes ref as the engine's image archive (docker save) to w,
// for importing into another runtime's image store.
func SaveImage(ctx context.Context, ref string, w io.Writer) error {
	p, err := healthyProvider(ctx)
	if err != nil {
		return err
	}
	defer p.Close()
	r, err := p.Client().ImageSave(ctx, []string{ref})
	if err != nil {
		return fmt.Errorf("bench: save image %s: %w", ref, err)
	}
	defer r.Close()
	if _, err := io.Copy(w, r); err != nil {
		return fmt.Errorf("bench: save image %s: %w", ref, err)
	}
	return nil
}
