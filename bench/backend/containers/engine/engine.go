// Package engine builds the project's Docker images and runs the
// benchmark's servers as containers through testcontainers-go.
//
// Images are built locally from Go, with a build context assembled here,
// because no registry can be assumed: static Go binaries FROM scratch, and
// other programs from an image named in the environment, a registry, or
// the host's executable packaged FROM scratch. They are tagged by content
// hash and reused.
//
// Containers run on one bridge network per Session and are reached by
// their IP address on it (no docker-proxy) when the host routes to that
// network, else through published ports. Everything created carries the
// label org.monolock-bench=1 (and containers and networks the session's
// id), so Session.Close, and RemoveAll for `make clean`, find it all.
//
// Ryuk, the testcontainers reaper, is disabled: its image cannot be pulled
// here, and this package removes what it creates itself.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// Labels put on everything this package creates.
const (
	// LabelProject is set to "1" on every container, network and image.
	LabelProject = "org.monolock-bench"
	// LabelSession holds the Session.ID on containers and networks.
	LabelSession = "org.monolock-bench.session"
	// LabelName holds the container's short name within its session.
	LabelName = "org.monolock-bench.name"
	// LabelSource holds an image's Source.
	LabelSource = "org.monolock-bench.source"
	// LabelOwner, on a session's networks, names the process that made
	// the session (owner.go), so that a later session removes it if that
	// process ended without closing it.
	LabelOwner = "org.monolock-bench.owner"
)

// ryukEnv is the testcontainers switch for its reaper container.
const ryukEnv = "TESTCONTAINERS_RYUK_DISABLED"

var (
	// ErrNoEngine is returned (wrapped) when no Docker engine answers.
	ErrNoEngine = errors.New("bench: no Docker engine answers")
	// ErrSessionClosed is returned by a start after Session.Close.
	ErrSessionClosed = errors.New("bench: container session closed")
)

// Ping reports whether a Docker engine answers; the error wraps
// ErrNoEngine when none does.
func Ping(ctx context.Context) error {
	p, err := healthyProvider(ctx)
	if err != nil {
		return err
	}
	return p.Close()
}

// healthyProvider is newProvider after the engine answered a health check;
// the caller closes it.
func healthyProvider(ctx context.Context) (*testcontainers.DockerProvider, error) {
	p, err := newProvider()
	if err != nil {
		return nil, err
	}
	if err := p.Health(ctx); err != nil {
		p.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %w", ErrNoEngine, err)
	}
	return p, nil
}

// newProvider connects to the Docker engine. It defaults
// TESTCONTAINERS_RYUK_DISABLED to "true" first, because testcontainers
// reads its configuration once, on first use; an explicit setting wins.
func newProvider() (*testcontainers.DockerProvider, error) {
	if _, set := os.LookupEnv(ryukEnv); !set {
		if err := os.Setenv(ryukEnv, "true"); err != nil {
			return nil, fmt.Errorf("bench: set %s: %w", ryukEnv, err)
		}
	}
	// The engine connection logs through the package default logger.
	tclog.SetDefault(debugLogger{})
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(debugLogger{}))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoEngine, err)
	}
	return p, nil
}

// debugLogger sends testcontainers' chatter to slog at debug level, so it
// stays out of the bench's progress output unless asked for.
type debugLogger struct{}

func (debugLogger) Printf(format string, v ...any) {
	slog.Debug("testcontainers: " + fmt.Sprintf(format, v...))
}
