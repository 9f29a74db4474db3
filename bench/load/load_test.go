package load

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// scriptedLocker is a stand-in lock for testing the harness itself (not a
// measured system): Acquire takes acquireIn, Release takes releaseIn, and
// err, when set, is returned by Acquire.
type scriptedLocker struct {
	acquireIn, releaseIn time.Duration
	err                  error
	lost                 bool
}

func (s *scriptedLocker) Acquire(ctx context.Context, _ string) (bench.Held, error) {
	select {
	case <-time.After(s.acquireIn):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.err != nil {
		return nil, s.err
	}
	h := &scriptedHeld{s: s, lost: make(chan struct{})}
	if s.lost {
		close(h.lost)
	}
	return h, nil
}
func (s *scriptedLocker) Close() error { return nil }

type scriptedHeld struct {
	s    *scriptedLocker
	lost chan struct{}
}

func (h *scriptedHeld) Token() (uint64, bool) { return 0, false }
func (h *scriptedHeld) Lost() <-chan struct{} { return h.lost }
func (h *scriptedHeld) Release(context.Context) error {
	time.Sleep(h.s.releaseIn)
	return nil
}

// cpuServer is a server whose CPU clock the backend can read.
type cpuServer struct{ bench.Server }

func (cpuServer) Addr() string { return "127.0.0.1:1" }
func (cpuServer) CPU(context.Context) (time.Duration, string, bool, error) {
	return time.Second, "fake", true, nil
}

// Measure records a cumulative probe's change over the span and a level
// probe's value after it; an optional probe that cannot be read is left
// out, a required one fails the measurement.
func TestMeasureReadsProbes(t *testing.T) {
	env := &bench.Env{
		Contender: bench.Contender{Name: "scripted", New: func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
			return &scriptedLocker{}, nil
		}},
		Servers: []bench.Server{cpuServer{}},
		Addrs:   []string{"127.0.0.1:1"},
	}
	reads := 0
	counter := Probe{Cumulative: true, Read: func(context.Context, *bench.Env) (map[string]int64, error) {
		reads++
		return map[string]int64{"counter": int64(5 + 7*(reads-1))}, nil
	}}
	level := Probe{Read: func(_ context.Context, e *bench.Env) (map[string]int64, error) {
		return map[string]int64{"level": int64(len(e.Addrs) + 2)}, nil
	}}
	broken := func(optional, cumulative bool) Probe {
		return Probe{Optional: optional, Cumulative: cumulative, Read: func(context.Context, *bench.Env) (map[string]int64, error) {
			return map[string]int64{"broken": 1}, errors.New("unreadable")
		}}
	}
	w := ClosedLoop{Workers: 1, Key: func(int) string { return "k" }, Cycles: 2,
		Probes: []Probe{counter, level, broken(true, true), broken(true, false)}}
	m, err := Measure(t.Context(), env, w)
	if err != nil {
		t.Fatal(err)
	}
	if m.Rec.Cycles != 2 || reads != 2 {
		t.Fatalf("%d cycles, %d reads of the counter; want 2 and 2 (at the window's edges)", m.Rec.Cycles, reads)
	}
	if len(m.Changes) != 1 || m.Changes["counter"] != 7 || len(m.Levels) != 1 || m.Levels["level"] != 3 {
		t.Fatalf("changes %v levels %v; want counter 7 and level 3 alone", m.Changes, m.Levels)
	}
	for _, cumulative := range []bool{true, false} {
		w.Probes = []Probe{broken(false, cumulative)}
		if _, err := Measure(t.Context(), env, w); err == nil || !strings.Contains(err.Error(), "unreadable") {
			t.Errorf("a required probe (cumulative %v) that fails: Measure = %v, want its error", cumulative, err)
		}
	}
}
