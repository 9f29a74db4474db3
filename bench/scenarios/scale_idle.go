package scenarios

// The scale scenario's idle-holder runner (idle-*).

import (
	"context"
	"fmt"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/load/sessions"
	"github.com/monolock/monolock-bench/bench/results"
)

func runIdle(outer context.Context, env *bench.Env, cfg ScaleConfig, c int, lease time.Duration) (results.Raw, error) {
	ctx, cancel := context.WithTimeout(outer, cfg.timeout+lease)
	defer cancel()
	s, err := prepare(ctx, env, cfg, c, lease)
	defer s.close()
	if err != nil {
		return skipped(err, s.counts)
	}
	anon0, total0, memOK, err := s.memory(ctx)
	if err != nil {
		return results.Raw{}, err
	}
	client0 := clientMemory()
	set, smp, err := s.openSessions(ctx, sessions.Config{
		Sessions: s.c, Concurrency: cfg.Concurrency, KeyPrefix: "idle-" + randomHex() + "-",
		Ramp: lease / 3,
	})
	if err != nil {
		return s.reached(smp, err)
	}
	defer set.Close(context.WithoutCancel(ctx))
	a, err := s.read(ctx, env)
	if err == nil {
		err = bench.Sleep(ctx, cfg.window(lease))
	}
	var b reading
	if err == nil {
		b, err = s.read(ctx, env)
	}
	if err != nil {
		return s.overCap(outer, ctx, s.c, "the measuring window", err)
	}
	held, waiting, ended := set.Counts()
	sm := results.ScaleMetrics
	raw := s.record()
	raw.Counts["held"], raw.Counts["waiting"], raw.Counts["lost"] = int64(held), int64(waiting), int64(ended)
	raw.Metrics = append(raw.Metrics,
		sm.SessionsReached.Of(float64(held)),
		sm.Sessions.Of(float64(s.c)),
		sm.OpenSeconds.Of(set.OpenTime().Seconds()),
	)
	if held == s.c {
		raw.Metrics = append(raw.Metrics, sm.ClientBytesPerLock.Of((clientMemory()-client0)/float64(s.c)))
	}
	s.load(&raw, a, b)
	if memOK && s.c >= minMemorySessions {
		// Lost sessions leave memory the server has not returned: it is
		// read and divided per session only while every session is held.
		// The slope stands either way: it is sampled against the sessions
		// held while they opened.
		if held == s.c {
			anon, total, ok, err := s.memory(ctx)
			if err != nil {
				return results.Raw{}, err
			}
			if ok {
				raw.Metrics = append(raw.Metrics,
					sm.ServerBytesPerSession.Of((anon-anon0)/float64(s.c)),
					sm.ServerTotalBytesPerSession.Of((total-total0)/float64(s.c)))
			}
		}
		smp.mu.Lock()
		pts := append([]sessions.Point{{X: 0, Y: anon0}}, smp.points...)
		smp.mu.Unlock()
		if fit, err := sessions.Fit(pts); err == nil {
			raw.Metrics = append(raw.Metrics,
				sm.ServerBytesPerSessionSlope.Of(fit.Slope),
				sm.ServerBytesSlopeR2.Of(fit.R2))
		}
	}
	if held != s.c {
		raw.Errors = load.NoteError(raw.Errors, fmt.Sprintf("%d of %d sessions still held after the window (%d ended): no memory per session or per lock", held, s.c, ended))
	}
	return raw, nil
}
