package scenarios

// The scale scenario's sharded idle variant (idle-<C>-workers<N>): the C
// idle holders opened by N worker processes on hosts of their own, where
// the deployment can run them (bench.WorkerRunner: the kubernetes
// backend's worker pods), so that the load passes one host's socket cap.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/load/shard"
	"github.com/monolock/monolock-bench/bench/results"
)

func runSharded(ctx context.Context, env *bench.Env, cfg ScaleConfig, c, workers int, lease time.Duration) (results.Raw, error) {
	wr, ok := env.Deployment.(bench.WorkerRunner)
	if !ok {
		return results.Raw{Skipped: "the backend runs no workers on hosts of their own (the kubernetes backend does)"}, nil
	}
	// The bound of a Locker is its server's too (PostgreSQL: a server
	// process per connection), which the workers share.
	if most := env.Contender.MaxSessions; most > 0 && c > most {
		return results.Raw{Skipped: fmt.Sprintf("%d sessions exceed the %d sessions one %s Locker can have at once, which its servers bound for all workers together: %s", c, most, env.Contender.Name, env.Contender.MaxSessionsReason)}, nil
	}
	spec := shard.Spec{
		Contender: env.Contender.Name, Addrs: env.Addrs, Lease: lease,
		Sessions: c / workers, KeyPrefix: "sharded-" + randomHex() + "-",
		Ramp: lease / 3, Window: cfg.window(lease),
	}
	arg, err := json.Marshal(spec)
	if err != nil {
		return results.Raw{}, err
	}
	start := time.Now()
	outs, err := wr.RunWorkers(ctx, workers, string(arg))
	if err != nil {
		return results.Raw{}, err
	}
	reports := make([]shard.Report, len(outs))
	for i, o := range outs {
		if reports[i], err = shard.ReadReport(o.Stdout); err != nil {
			return results.Raw{}, fmt.Errorf("worker %d on %s: %w", o.Index, o.Node, err)
		}
	}
	m, err := shard.Merge(reports)
	if err != nil {
		return results.Raw{}, err
	}
	nodes := map[string]bool{}
	for _, o := range outs {
		nodes[o.Node] = true
	}
	sm := results.ScaleMetrics
	raw := results.Raw{
		Seconds: time.Since(start).Seconds(),
		Counts:  map[string]int64{"held": int64(m.Held), "waiting": int64(m.Waiting), "lost": int64(m.Lost)},
		Metrics: []results.Metric{
			sm.SessionsReached.Of(float64(m.Held)),
			sm.Sessions.Of(float64(m.Sessions)),
			sm.OpenSeconds.Of(m.OpenTime.Seconds()),
			sm.Workers.Of(float64(m.Workers)),
			sm.WorkerHosts.Of(float64(len(nodes))),
			sm.OpenAcquireP50.Of(float64(m.Acquire.ValueAtQuantile(50))),
			sm.OpenAcquireP99.Of(float64(m.Acquire.ValueAtQuantile(99))),
		},
	}
	h, err := results.NewHistogram("open_acquire", "us", m.Acquire)
	if err != nil {
		return results.Raw{}, err
	}
	raw.Histograms = append(raw.Histograms, h)
	if m.Held != m.Sessions {
		raw.Errors = load.NoteError(raw.Errors, fmt.Sprintf("%d of %d sessions held after the window (%d ended, %d waiting)", m.Held, m.Sessions, m.Lost, m.Waiting))
	}
	return raw, nil
}

// workerStart is what the plan adds for the workers' Job: pods scheduled,
// started and their logs read (a few seconds on a local cluster).
const workerStart = 5 * time.Second

// shardedLease is the sharded variant's lease: the short lease of issue
// 40's fd-cap check where it is set, else the long one.
func (c ScaleConfig) shardedLease() time.Duration {
	if c.ShortLease > 0 {
		return c.ShortLease
	}
	return c.LongLease
}
