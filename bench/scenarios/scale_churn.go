package scenarios

// The scale scenario's churn runner (churn-*): C sessions cycling on C/10 locks.

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
)

// failurePause keeps a session whose Acquire failed from spinning.
const failurePause = 10 * time.Millisecond

func runChurn(ctx context.Context, env *bench.Env, cfg ScaleConfig, c int) (results.Raw, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	s, err := prepare(ctx, env, cfg, c, cfg.LongLease)
	defer s.close()
	if err != nil {
		return skipped(err, s.counts)
	}
	keys := max(1, c/10)
	prefix := "churn-" + randomHex() + "-"
	var (
		mu       sync.Mutex
		wait     = load.NewHistogram()
		grants   int64
		failures int64
		errs     []string
		counting atomic.Bool
	)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i := range c {
		key := prefix + strconv.Itoa(i%keys)
		wg.Go(func() {
			// Starts spread over the warm-up, as sessions of a fleet.
			if bench.Sleep(runCtx, time.Duration(int64(churnWarmup)*int64(i)/int64(c))) != nil {
				return
			}
			for runCtx.Err() == nil {
				start := time.Now()
				h, err := s.locker.Acquire(runCtx, key)
				if err != nil {
					if runCtx.Err() == nil {
						mu.Lock()
						failures++
						errs = load.NoteError(errs, err.Error())
						mu.Unlock()
						_ = bench.Sleep(runCtx, failurePause)
					}
					continue
				}
				if counting.Load() {
					mu.Lock()
					grants++
					_ = wait.RecordValue(int64(time.Since(start)))
					mu.Unlock()
				}
				_ = bench.Sleep(runCtx, DefaultChurnHold)
				_ = h.Release(context.WithoutCancel(runCtx))
			}
		})
	}
	if err := bench.Sleep(ctx, churnWarmup); err != nil {
		return results.Raw{}, err
	}
	a, err := s.read(ctx, env)
	if err != nil {
		return results.Raw{}, err
	}
	counting.Store(true)
	if err := bench.Sleep(ctx, cfg.MinWindow); err != nil {
		return results.Raw{}, err
	}
	counting.Store(false)
	b, err := s.read(ctx, env)
	if err != nil {
		return results.Raw{}, err
	}
	stop()
	wg.Wait()
	raw := s.record()
	s.load(&raw, a, b)
	sm := results.ScaleMetrics
	// Under churn the keep-alive counters also count releases (a Redis
	// release is a script too): no heartbeat figure.
	raw.Metrics = slices.DeleteFunc(raw.Metrics, func(m results.Metric) bool {
		return m.Name == sm.HeartbeatsPerSec.Name || m.Name == sm.ServerCPUUsPerHeartbeat.Name || m.Name == sm.ClientCPUUsPerHeartbeat.Name
	})
	mu.Lock()
	defer mu.Unlock()
	raw.Counts["grants"], raw.Counts["failures"] = grants, failures
	for _, e := range errs {
		raw.Errors = load.NoteError(raw.Errors, e)
	}
	secs := b.at.Sub(a.at).Seconds()
	raw.Metrics = append(raw.Metrics,
		sm.SessionsReached.Of(float64(c)),
		sm.GrantsPerSec.Of(float64(grants)/secs),
		sm.Failures.Of(float64(failures)),
	)
	if grants > 0 {
		h, err := results.NewHistogram("wait", "ns", wait)
		if err != nil {
			return results.Raw{}, err
		}
		raw.Histograms = append(raw.Histograms, h)
		raw.Metrics = append(raw.Metrics,
			sm.WaitP50.Of(float64(wait.ValueAtQuantile(50))/1e6),
			sm.WaitP99.Of(float64(wait.ValueAtQuantile(99))/1e6),
		)
		if raw.CPU != nil {
			raw.Metrics = append(raw.Metrics, sm.ServerCPUMsPer1k.Of(raw.CPU.ServerMS*1000/float64(grants)))
		}
	}
	return raw, nil
}
