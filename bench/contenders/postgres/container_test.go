package postgres

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestContainer builds the image (then reuses it), starts the server in a
// container with tuned keepalives and runs the mutual-exclusion check
// through it.
func TestContainer(t *testing.T) {
	benchtest.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	img, err := Image(ctx)
	if errors.Is(err, ErrNoServer) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s (%s, built %v)", img.Ref, img.Source, img.Built)
	again, err := Image(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.Ref != img.Ref || again.Built {
		t.Errorf("second Image call: %+v, want %s reused", again, img.Ref)
	}

	s, err := engine.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("session close: %v", err)
		}
	})
	c, err := s.Start(ctx, engine.Spec{
		Name:       "postgres",
		Image:      engine.Image(img),
		Cmd:        ContainerCmd(TunedKeepalives...),
		Port:       Port,
		Ready:      Ready,
		StopSignal: unix.SignalName(KeepaliveServer.GracefulSignal()),
	})
	if err != nil {
		t.Fatal(err)
	}
	probe := newProbe(t, c.Addr())
	set, err := probe.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if set["server.tcp_keepalives_idle"] != "1" || set["server.server_version"] == "" {
		t.Errorf("settings %v: want tuned keepalives", set)
	}
	l := newLocker(t, Config{Addr: c.Addr(), Lease: time.Second, Fence: true})
	benchtest.MutualExclusion(t, l, "container", 4, 10, 2*time.Minute)

	// A graceful stop with the Locker's connections open is the fast
	// shutdown: a smart one would wait for them until the engine's kill.
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if logs, err := c.Logs(ctx); err != nil {
		t.Error(err)
	} else if !strings.Contains(logs, "received fast shutdown request") {
		t.Errorf("graceful stop: want a fast shutdown, server output:\n%s", logs)
	}
}
