package scenarios

// The chaos scenario's steps side by side (ChaosConfig.Parallel): a soak
// of every lock at the same schedule takes minutes per lock, and its
// clients and servers leave most of a core idle, so several locks run
// at once. Locks that share a server role run one after another in one
// lane: a server kill or pause for one would strike the other's history.

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// sideBySide runs every env's step, at most cfg.Parallel lanes at once,
// and returns one record and one error per env, in envs' order.
func (cfg ChaosConfig) sideBySide(ctx context.Context, envs []*bench.Env, skip func(bench.Contender) string, quick bool) ([]results.Raw, []error) {
	raws, errs := make([]results.Raw, len(envs)), make([]error, len(envs))
	lanes := chaosLanes(envs, func(i int) bool {
		if why := skip(envs[i].Contender); why != "" {
			raws[i] = results.Raw{Skipped: why}
			return false
		}
		return true
	})
	// A soak's step lasts half an hour: each lock's end is logged, so a
	// user sees it advance.
	total, done, start := 0, 0, time.Now()
	for _, l := range lanes {
		total += len(l)
	}
	var mu sync.Mutex
	queue := make(chan []int, len(lanes))
	for _, l := range lanes {
		queue <- l
	}
	close(queue)
	var wg sync.WaitGroup
	for range min(max(cfg.Parallel, 1), len(lanes)) {
		wg.Go(func() {
			for lane := range queue {
				for _, i := range lane {
					if ctx.Err() != nil {
						raws[i], errs[i] = results.Raw{}, ctx.Err()
						continue
					}
					raws[i], errs[i] = cfg.run(ctx, envs[i], quick)
					mu.Lock()
					done++
					slog.Info("chaos: a lock's schedule ended", "contender", envs[i].Contender.Name, "done", done, "of", total,
						"elapsed", time.Since(start).Round(time.Second), "error", errs[i])
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return raws, errs
}

// chaosLanes groups the indexes of envs that run (keep) by their
// contender's server role, in order of first appearance, the longest
// lanes first so that they start first.
func chaosLanes(envs []*bench.Env, keep func(i int) bool) [][]int {
	var lanes [][]int
	lane := map[string]int{}
	for i, e := range envs {
		if !keep(i) {
			continue
		}
		role := e.Contender.Server.Name
		j, ok := lane[role]
		if !ok {
			j = len(lanes)
			lane[role] = j
			lanes = append(lanes, nil)
		}
		lanes[j] = append(lanes[j], i)
	}
	slices.SortStableFunc(lanes, func(a, b []int) int { return cmp.Compare(len(b), len(a)) })
	return lanes
}
