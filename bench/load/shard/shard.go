// Package shard splits a scale scenario's idle sessions over worker
// processes on hosts of their own (the kubernetes backend's worker pods),
// where one process would stop at its host's open-file cap: each worker
// runs one shard (Run) and reports its raw figures, and the bench merges
// the reports (Merge): counts summed, latency histograms merged, never
// averaged.
package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load/sessions"
	"github.com/monolock/monolock-bench/bench/results"
)

// Spec is what every worker of one run is told; each adds its own index.
type Spec struct {
	// Contender names the lock (as in the contender table) and Addrs its
	// servers.
	Contender string        `json:"contender"`
	Addrs     []string      `json:"addrs"`
	Lease     time.Duration `json:"lease_ns"`
	// Sessions is each shard's count of idle holders, on keys of its own.
	Sessions int `json:"sessions"`
	// KeyPrefix starts every key; the shard's index follows it.
	KeyPrefix string `json:"key_prefix"`
	// Ramp spreads each shard's session starts; Window is how long every
	// session is kept once all are open, before they are counted.
	Ramp   time.Duration `json:"ramp_ns"`
	Window time.Duration `json:"window_ns"`
}

// Report is one shard's raw figures.
type Report struct {
	Shard int    `json:"shard"`
	Host  string `json:"host"`
	// Sessions asked; held, still waiting and ended at the window's end.
	Sessions int `json:"sessions"`
	Held     int `json:"held"`
	Waiting  int `json:"waiting"`
	Lost     int `json:"lost"`
	// OpenTime is how long the shard took to open its sessions.
	OpenTime time.Duration `json:"open_ns"`
	// CPU is the worker process's own CPU time over open and window.
	CPU time.Duration `json:"cpu_ns"`
	// Acquire is the latency of every granted Acquire, in microseconds.
	Acquire results.Histogram `json:"acquire"`
}

// ReadReport finds a worker's report in its output: the last line that
// holds one (the worker's log lines may come before or after it).
func ReadReport(out []byte) (Report, error) {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var r Report
		if json.Unmarshal(lines[i], &r) == nil && r.Sessions > 0 {
			return r, nil
		}
	}
	return Report{}, fmt.Errorf("shard: no report in the worker's output (%d bytes)", len(out))
}

// acquireMax bounds the recorded acquire latency (µs): a minute.
const acquireMax = int64(time.Minute / time.Microsecond)

// Run opens spec.Sessions idle holders with l on keys of shard index,
// keeps them for spec.Window and reports what it saw. The sessions are
// closed before it returns.
func Run(ctx context.Context, l bench.Locker, spec Spec, index int) (Report, error) {
	if spec.Sessions < 1 || spec.Window <= 0 {
		return Report{}, fmt.Errorf("shard: %d sessions for %v: want at least one session and a window", spec.Sessions, spec.Window)
	}
	host, _ := os.Hostname()
	cpu0 := processCPU()
	timed := &timedLocker{Locker: l, h: hdrhistogram.New(1, acquireMax, 3)}
	set, err := sessions.Open(ctx, sessions.Config{
		Locker: timed, Sessions: spec.Sessions, KeyPrefix: fmt.Sprintf("%s%d-", spec.KeyPrefix, index), Ramp: spec.Ramp,
	})
	if err != nil {
		return Report{}, fmt.Errorf("shard %d: %w", index, err)
	}
	defer set.Close(context.WithoutCancel(ctx))
	if err := bench.Sleep(ctx, spec.Window); err != nil {
		return Report{}, err
	}
	held, waiting, lost := set.Counts()
	r := Report{Shard: index, Host: host, Sessions: spec.Sessions, Held: held, Waiting: waiting, Lost: lost,
		OpenTime: set.OpenTime(), CPU: processCPU() - cpu0}
	if r.Acquire, err = timed.snapshot(); err != nil {
		return Report{}, err
	}
	return r, nil
}

// timedLocker records the latency of each granted Acquire.
type timedLocker struct {
	bench.Locker
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

func (t *timedLocker) Acquire(ctx context.Context, key string) (bench.Held, error) {
	start := time.Now()
	held, err := t.Locker.Acquire(ctx, key)
	if err == nil {
		us := max(time.Since(start).Microseconds(), 1)
		t.mu.Lock()
		t.h.RecordValue(min(us, acquireMax))
		t.mu.Unlock()
	}
	return held, err
}

func (t *timedLocker) snapshot() (results.Histogram, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return results.NewHistogram("acquire", "us", t.h)
}

// processCPU is this process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Merged is the shards' figures as one run's.
type Merged struct {
	// Workers is the number of shards; Hosts the distinct hosts they ran
	// on, sorted.
	Workers int
	Hosts   []string
	// Sessions, Held, Waiting, Lost and CPU are the shards' sums.
	Sessions, Held, Waiting, Lost int
	CPU                           time.Duration
	// OpenTime is the slowest shard's: the sessions were all open then.
	OpenTime time.Duration
	// Acquire merges every shard's histogram.
	Acquire *hdrhistogram.Histogram
}

// Merge adds the reports up. Each shard must appear once.
func Merge(reports []Report) (Merged, error) {
	if len(reports) == 0 {
		return Merged{}, errors.New("shard: no reports to merge")
	}
	m := Merged{Workers: len(reports), Acquire: hdrhistogram.New(1, acquireMax, 3)}
	seen := map[int]bool{}
	for _, r := range reports {
		if seen[r.Shard] {
			return Merged{}, fmt.Errorf("shard: shard %d reported twice", r.Shard)
		}
		seen[r.Shard] = true
		if !slices.Contains(m.Hosts, r.Host) {
			m.Hosts = append(m.Hosts, r.Host)
		}
		m.Sessions += r.Sessions
		m.Held += r.Held
		m.Waiting += r.Waiting
		m.Lost += r.Lost
		m.CPU += r.CPU
		m.OpenTime = max(m.OpenTime, r.OpenTime)
		h, err := r.Acquire.Decode()
		if err != nil {
			return Merged{}, fmt.Errorf("shard %d: %w", r.Shard, err)
		}
		if dropped := m.Acquire.Merge(h); dropped > 0 {
			return Merged{}, fmt.Errorf("shard %d: %d acquire latencies outside the histogram's range", r.Shard, dropped)
		}
	}
	slices.Sort(m.Hosts)
	return m, nil
}
