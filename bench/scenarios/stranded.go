package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// The stranded watch: once every client of a step has closed, are its
// locks still held on the servers (bench.Contender.HeldOnServer), and
// for how long? The safety pause and the chaos step ask.

const (
	// strandedWait bounds the watch: a session's end frees its locks
	// within milliseconds, while a lock left on a pooled server
	// connection stays until the pooler closes that connection, minutes
	// later.
	strandedWait = 3 * time.Second
	// strandedPoll is how often the servers' record is read meanwhile:
	// the watch's resolution.
	strandedPoll = 50 * time.Millisecond
)

// watchStranded reads which of keys the servers still hold until none
// is or strandedWait ran out: how many were still held then, and how
// long they were watched.
func watchStranded(ctx context.Context, heldOnServer func(context.Context, []bench.Server, []string) ([]string, error), servers []bench.Server, keys []string) (held int, watched time.Duration, err error) {
	start := time.Now()
	left := keys
	for {
		if left, err = heldOnServer(ctx, servers, left); err != nil {
			return 0, 0, fmt.Errorf("scenarios: reading the servers' held locks: %w", err)
		}
		watched = time.Since(start)
		if len(left) == 0 || watched >= strandedWait {
			return len(left), watched, nil
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(strandedPoll):
		}
	}
}
