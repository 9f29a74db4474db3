package scenarios

// The scale scenario's queue runner (queue-*): fill one lock's queue, sample promotions.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/load/sessions"
	"github.com/monolock/monolock-bench/bench/results"
)

func runQueue(ctx context.Context, env *bench.Env, cfg ScaleConfig, depth int, st *scaleState) (results.Raw, error) {
	st.mu.Lock()
	reason, capped := st.saturated[env.Contender.Name]
	st.mu.Unlock()
	if capped {
		return results.Raw{Skipped: "capped: " + reason}, nil
	}
	outer := ctx
	ctx, cancel := context.WithTimeout(outer, cfg.timeout)
	defer cancel()
	s, err := prepare(ctx, env, cfg, depth+1, cfg.QueueLease)
	defer s.close()
	if err != nil {
		return skipped(err, s.counts)
	}
	anon0, _, memOK, err := s.memory(ctx)
	if err != nil {
		return results.Raw{}, err
	}
	var base int64
	if s.probe != nil {
		c, err := s.probe.Counts(ctx)
		if err != nil {
			return results.Raw{}, err
		}
		base = c.Waiting
	}
	qcfg := sessions.Config{Sessions: depth + 1, Keys: 1, Concurrency: cfg.Concurrency}
	if s.probe != nil {
		qcfg.Queued = func(ctx context.Context) (int, error) {
			c, err := s.probe.Counts(ctx)
			return int(c.Waiting - base), err
		}
	}
	raw := s.record()
	promo := load.NewHistogram()
	first := true
	// Sampling ends after Promotions or when PromotionTime is spent: a
	// polling queue may take long to promote.
	pctx := ctx
	for promo.TotalCount() < int64(cfg.Promotions) {
		qcfg.KeyPrefix = "queue-" + randomHex() + "-"
		set, smp, err := s.openSessions(ctx, qcfg)
		if err != nil {
			return s.reached(smp, err)
		}
		if first {
			first = false
			if err := s.queueLoad(ctx, env, &raw, set, anon0, memOK, cfg.queueWindow(env.Contender)); err != nil {
				set.Close(context.WithoutCancel(ctx))
				return s.overCap(outer, ctx, s.c, "the measuring window", err)
			}
			var stop context.CancelFunc
			pctx, stop = context.WithTimeout(ctx, cfg.PromotionTime)
			defer stop()
		}
		err = promote(pctx, set, promo, cfg.Promotions)
		set.Close(context.WithoutCancel(ctx))
		if pctx.Err() != nil && ctx.Err() == nil {
			raw.Errors = load.NoteError(raw.Errors, fmt.Sprintf("promotion sampling stopped after %v with %d promotions", cfg.PromotionTime, promo.TotalCount()))
			break
		}
		if errors.Is(err, errHolderLost) {
			raw.Counts["holders_lost"]++
			raw.Errors = load.NoteError(raw.Errors, fmt.Sprintf("%v with %d waiters after %d promotions: sampling stopped", err, depth, promo.TotalCount()))
			break
		}
		if timeCapped(outer, ctx, err) {
			raw.Errors = load.NoteError(raw.Errors, fmt.Sprintf("the variant's time cap of %v ended promotion sampling after %d promotions", cfg.timeout, promo.TotalCount()))
			break
		}
		if errors.Is(err, errNoPromotion) {
			raw.Counts["promotion_timeouts"]++
			raw.Errors = load.NoteError(raw.Errors, fmt.Sprintf("%v with %d waiters after %d promotions: sampling stopped", err, depth, promo.TotalCount()))
			break
		}
		if err != nil {
			return results.Raw{}, err
		}
	}
	sm := results.ScaleMetrics
	raw.Metrics = append(raw.Metrics, sm.Promotions.Of(float64(promo.TotalCount())))
	if promo.TotalCount() > 0 {
		h, err := results.NewHistogram("promotion", "ns", promo)
		if err != nil {
			return results.Raw{}, err
		}
		raw.Histograms = append(raw.Histograms, h)
		raw.Metrics = append(raw.Metrics,
			sm.PromotionP50.Of(us(promo.ValueAtQuantile(50))),
			sm.PromotionP99.Of(us(promo.ValueAtQuantile(99))),
		)
	}
	for _, m := range raw.Metrics {
		if m.Name == sm.ServerCPUMsPerSec.Name && m.Value >= float64(saturatedCPU)/1e6 {
			st.mu.Lock()
			st.saturated[env.Contender.Name] = fmt.Sprintf("the coordinator saturated at queue-%s (%.0f ms CPU/s with %d polling waiters)", countName(depth), m.Value, depth)
			st.mu.Unlock()
			raw.Metrics = append(raw.Metrics, sm.Saturated.Of(1))
		}
	}
	return raw, nil
}

// queueLoad measures the full queue: time to fill it, the memory it takes
// and the load its waiting puts on the coordinator over a window.
func (s *setup) queueLoad(ctx context.Context, env *bench.Env, raw *results.Raw, set *sessions.Set, anon0 float64, memOK bool, window time.Duration) error {
	sm := results.ScaleMetrics
	held, waiting, _ := set.Counts()
	raw.Metrics = append(raw.Metrics,
		sm.SessionsReached.Of(float64(held+waiting)),
		sm.Depth.Of(float64(s.c-1)),
		sm.QueueFillMs.Of(float64(set.OpenTime())/1e6),
	)
	a, err := s.read(ctx, env)
	if err != nil {
		return err
	}
	if err := bench.Sleep(ctx, window); err != nil {
		return err
	}
	b, err := s.read(ctx, env)
	if err != nil {
		return err
	}
	s.load(raw, a, b)
	if s.probe != nil {
		// What the waiting itself costs the coordinator: every command
		// but the sessions' keep-alives (polls, re-queues, ...).
		span := b.at.Sub(a.at)
		other := (b.counts.Commands - a.counts.Commands) - (b.counts.KeepAlives - a.counts.KeepAlives)
		raw.Metrics = append(raw.Metrics, sm.WaitingOpsPerSec.Of(float64(other)/span.Seconds()))
		// The tries themselves, per waiter and lease: what tells a
		// waiter that polls from one that waits for a signal.
		tries := b.counts.Attempts - a.counts.Attempts
		raw.Counts["window_tries"] = tries
		raw.Metrics = append(raw.Metrics, sm.WaiterTriesPerLease.Of(float64(tries)/float64(s.c-1)*float64(s.lease)/float64(span)))
	}
	if memOK && s.c >= minMemorySessions {
		anon, _, ok, err := s.memory(ctx)
		if err != nil {
			return err
		}
		if ok {
			raw.Metrics = append(raw.Metrics, sm.ServerBytesPerSession.Of((anon-anon0)/float64(s.c)))
		}
	}
	return nil
}

// promote releases the holder of set's key and times the grant of the
// next session, until no waiter is left or the histogram has want
// samples. Waiters are granted in whatever order the contender grants.
func promote(ctx context.Context, set *sessions.Set, h *hdrhistogram.Histogram, want int) error {
	all := set.Sessions()
	granted := make(chan *sessions.Session, len(all))
	for _, x := range all[1:] {
		go func() {
			select {
			case <-x.Done():
				granted <- x
			case <-ctx.Done():
			}
		}()
	}
	holder := all[0]
	for left := len(all) - 1; left > 0 && h.TotalCount() < int64(want); left-- {
		t0 := time.Now()
		if err := holder.Release(ctx); err != nil {
			// The holder lost its lock before the release (its keep-alive
			// failed under the load): no promotion to time.
			return fmt.Errorf("%w: %w", errHolderLost, err)
		}
		select {
		case next := <-granted:
			if next.Err() != nil {
				return fmt.Errorf("waiter %d: %w", next.Index, next.Err())
			}
			if next.GrantedAt().Before(t0) {
				return fmt.Errorf("%w: waiter %d was granted before the release", errHolderLost, next.Index)
			}
			_ = h.RecordValue(int64(next.GrantedAt().Sub(t0)))
			holder = next
		case <-time.After(promotionTimeout):
			return errNoPromotion
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// errHolderLost: the holder's release failed, its lock was already lost.
var errHolderLost = errors.New("the holder's lock was lost before its release")

// errNoPromotion: no waiter was granted within promotionTimeout of the
// holder's release (polling waiters that keep colliding, a saturated
// coordinator).
var errNoPromotion = fmt.Errorf("no waiter granted within %v of the release", promotionTimeout)
