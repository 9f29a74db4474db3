package benchtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// noLock grants every Acquire at once: a broken lock the checker must catch.
type noLock struct{}

func (noLock) Acquire(context.Context, string) (bench.Held, error) { return noHeld{}, nil }
func (noLock) Close() error                                        { return nil }

type noHeld struct{}

func (noHeld) Token() (uint64, bool)         { return 0, false }
func (noHeld) Lost() <-chan struct{}         { return nil }
func (noHeld) Release(context.Context) error { return nil }

// recordingTB collects Errorf calls instead of failing the real test.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errors) > 0
}

func TestMutualExclusionCatchesOverlap(t *testing.T) {
	rec := &recordingTB{TB: t}
	MutualExclusion(rec, noLock{}, "k", 16, 5, 10*time.Second)
	if !rec.Failed() {
		t.Fatal("the checker accepted a lock that grants everyone at once")
	}
}
