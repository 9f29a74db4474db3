package monolock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// WatchSource says what WatchLock records, for the chaos settings.
const WatchSource = "monolock's audit log (-audit-log -), read back from the server's standard output; the servers write it only in a run of the chaos scenario alone (make bench-chaos, make chaos), since its writes would cost every other figure: a grant with its token, and an end with the server's reason (graceful; expired: the session was silent for a lease; io_timeout; force), each at the time in its line (the host's wall clock: the server is a static binary no clock fault reaches); a killed server's record ends with it (its holds end unrecorded) and its restart starts a new one"

// watchRetry is the pause before following a server again whose process
// ended or is not running.
const watchRetry = 50 * time.Millisecond

// WatchLock implements bench.LockWatch from the audit log of each server
// (bench.RecordFollower). A server that does not hand back its record
// (another backend, or a run that does not record) records nothing.
func WatchLock(ctx context.Context, servers []bench.Server, key string, report func(bench.LockChange)) {
	var wg sync.WaitGroup
	for _, s := range servers {
		if f, ok := s.(bench.RecordFollower); ok {
			wg.Go(func() { watchServer(ctx, s.Name(), f, key, report) })
		}
	}
	wg.Wait()
}

// watchServer follows one server's audit log, process after process,
// until ctx ends.
func watchServer(ctx context.Context, name string, f bench.RecordFollower, key string, report func(bench.LockChange)) {
	since := time.Now()
	for ctx.Err() == nil {
		err := f.FollowRecord(ctx, since,
			func(from time.Time) { report(bench.LockChange{Server: name, Kind: bench.WatchStarted, At: from}) },
			func(line []byte) {
				c, ok, err := auditChange(name, key, line)
				if err != nil { // a hole in the record: that line's change
					report(bench.LockChange{Server: name, Kind: bench.WatchBroken, Err: err})
					report(bench.LockChange{Server: name, Kind: bench.WatchStarted})
				} else if ok {
					report(c)
				}
			})
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, bench.ErrNotRecording):
			return
		case errors.Is(err, bench.ErrNotRunning):
		default:
			if err == nil {
				err = errors.New("monolock: the server's process ended")
			}
			report(bench.LockChange{Server: name, Kind: bench.WatchBroken, Err: err})
			since = time.Time{} // every line of the next process
		}
		_ = bench.Sleep(ctx, watchRetry)
	}
}

// auditLine is the part of an audit log line the watch reads.
type auditLine struct {
	Time   string  `json:"time"`
	Event  string  `json:"event"`
	Lock   string  `json:"lock"`
	Token  *uint64 `json:"token"`
	Reason string  `json:"reason"`
}

// auditChange returns line as a change of lock key: a grant, or an end
// with its reason; ok is false for other locks and other events, err
// says why a line is no audit record.
func auditChange(server, key string, line []byte) (_ bench.LockChange, ok bool, _ error) {
	var a auditLine
	if err := json.Unmarshal(line, &a); err != nil {
		return bench.LockChange{}, false, fmt.Errorf("monolock: audit line %q: %w", line, err)
	}
	if a.Lock != key {
		return bench.LockChange{}, false, nil
	}
	at, err := time.Parse(time.RFC3339Nano, a.Time)
	if err != nil {
		return bench.LockChange{}, false, fmt.Errorf("monolock: audit line %q: %w", line, err)
	}
	c := bench.LockChange{Server: server, Key: key, Token: a.Token, At: at}
	switch a.Event {
	case "granted":
		c.Kind = bench.LockGranted
	case "released":
		c.Kind, c.Cause = bench.LockEnded, a.Reason
	default:
		return bench.LockChange{}, false, nil
	}
	return c, true, nil
}
