package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
)

// ErrNotRunning is returned by FollowStdout when the container's process
// is not running (killed or stopped, and not restarted yet).
var ErrNotRunning = errors.New("engine: the container is not running")

// FollowStdout calls line with each line the container's current process
// writes to its standard output at or after since (the engine's log
// timestamps; every line of the process when since is earlier than its
// start), having called started with the time it followed from once the
// stream is open, and returns nil when the process ends, or ctx's error.
func (c *Container) FollowStdout(ctx context.Context, since time.Time, started func(from time.Time), line func([]byte)) error {
	inspect, err := c.api.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("bench: inspect %s: %w", c.Name, err)
	}
	st := inspect.Container.State
	if st == nil || !st.Running {
		return ErrNotRunning
	}
	if began, err := time.Parse(time.RFC3339Nano, st.StartedAt); err == nil && began.After(since) {
		since = began
	}
	rc, err := c.api.ContainerLogs(ctx, c.ID, client.ContainerLogsOptions{ShowStdout: true, Follow: true,
		Since: fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond())})
	if err != nil {
		return fmt.Errorf("bench: logs of %s: %w", c.Name, err)
	}
	defer rc.Close()
	stop := context.AfterFunc(ctx, func() { rc.Close() })
	defer stop()
	started(since)
	// The stream frames stdout and stderr: stdout goes through a pipe to
	// a line scanner.
	pr, pw := io.Pipe()
	defer pr.Close() // past an over-long line: the copy must not block
	go func() {
		_, err := stdcopy.StdCopy(pw, io.Discard, rc)
		pw.CloseWithError(err)
	}()
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line(sc.Bytes())
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("bench: logs of %s: %w", c.Name, err)
	}
	return nil
}
