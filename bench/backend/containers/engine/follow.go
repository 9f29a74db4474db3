package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
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
		Since: strconv.FormatInt(since.Unix(), 10) + "." + fmt.Sprintf("%09d", since.Nanosecond())})
	if err != nil {
		return fmt.Errorf("bench: logs of %s: %w", c.Name, err)
	}
	defer rc.Close()
	stop := context.AfterFunc(ctx, func() { rc.Close() })
	defer stop()
	started(since)
	w := &lineWriter{line: line}
	_, err = stdcopy.StdCopy(w, io.Discard, rc)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("bench: logs of %s: %w", c.Name, err)
	}
	return nil
}

// lineWriter calls line with each whole line written to it, without its
// newline; a line is never split across calls.
type lineWriter struct {
	line    func([]byte)
	partial []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			return n, nil
		}
		if len(w.partial) > 0 {
			w.partial = append(w.partial, p[:i]...)
			w.line(w.partial)
			w.partial = w.partial[:0]
		} else {
			w.line(p[:i])
		}
		p = p[i+1:]
	}
}
