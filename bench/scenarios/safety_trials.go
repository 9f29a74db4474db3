package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/faultproxy"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
)

// grantBound is how long B may wait for its grant after the fault, and A
// to learn after B's grant: the handover scenario's bound.
func (s *safetyRun) grantBound() time.Duration { return grantBound(s.env.Lease) }

// pause runs the pause trials: A is a holder process frozen past the
// lease.
func (s *safetyRun) pause(ctx context.Context, cmd holder.Command, trials int) error {
	b, err := s.env.Open(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	for range trials {
		if err := s.pauseTrial(ctx, cmd, b); err != nil {
			return err
		}
	}
	return nil
}

func (s *safetyRun) pauseTrial(ctx context.Context, cmd holder.Command, b bench.Locker) error {
	key := "safety-pause-" + randomHex()
	s.mu.Lock()
	s.keys = append(s.keys, key)
	s.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	a, err := holder.Start(rctx, cmd, holder.Spec{Contender: s.env.Contender.Name, Addrs: s.env.Addrs, Lease: s.env.Lease, Key: key})
	if err != nil {
		return fmt.Errorf("safety: starting holder A: %w", err)
	}
	defer a.Close()
	ga := guardedstore.Grant{Client: "A", Lock: key, Token: tokenOf(a.Token()), At: check.Now()}
	// A's write while it holds the lock: the one before the pause.
	if err := a.Send("A", key, s.storeAddrs(ga.Token)...); err != nil {
		return err
	}
	if err := a.Wrote(rctx); err != nil {
		return err
	}
	frozenAt := check.Now()
	if err := a.Freeze(); err != nil {
		return err
	}
	if at := a.SignalledAt(); !at.IsZero() {
		// A holder in a pod: frozen when its agent sent the signal, not
		// when the exec through the API began.
		frozenAt = check.Now() - check.Mono(time.Since(at))
	}
	hb, bAt, err := acquireWithin(ctx, b, key, s.grantBound())
	if errors.Is(err, errNotGranted) {
		// The lock stays with the frozen holder: safe, not available.
		s.count(results.SafetyMetrics.NotGranted)
		s.addGrants(ga)
		return nil
	}
	if err != nil {
		return err
	}
	if earlyGrant(frozenAt, bAt, s.env.Lease) {
		s.count(results.SafetyMetrics.EarlyGrants)
	}
	gb := guardedstore.Grant{Client: "B", Lock: key, Token: tokenOf(hb.Token()), At: bAt}
	s.write(ctx, "B", key, gb.Token)
	// A's write is queued before it resumes: it makes it at once.
	if err := a.Send("A", key, s.storeAddrs(ga.Token)...); err != nil {
		return err
	}
	if err := a.Resume(); err != nil {
		return err
	}
	wctx, wcancel := context.WithTimeout(ctx, readyTimeout)
	defer wcancel()
	if err := a.Wrote(wctx); err != nil {
		return fmt.Errorf("safety: A's write after resume: %w", err)
	}
	// A believed it held the lock up to its write.
	ga.End = check.Now()
	release(ctx, hb)
	gb.End = check.Now()
	s.addGrants(ga, gb)
	return nil
}

// earlyGrant reports whether B's grant at bAt came within half a lease of
// A's freeze at frozenAt: while A's lease, renewed at least every third
// of a lease, still ran.
func earlyGrant(frozenAt, bAt check.Mono, lease time.Duration) bool {
	return time.Duration(bAt-frozenAt) < lease/2
}

// hostLoss runs the host-loss trials: A's lock traffic goes through its own
// proxy links, which go silent.
func (s *safetyRun) hostLoss(ctx context.Context, trials int) error {
	proxy := faultproxy.New()
	defer proxy.Close()
	view, err := proxy.View("A", s.env.Addrs)
	if err != nil {
		return err
	}
	b, err := s.env.Open(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	for range trials {
		if err := s.hostLossTrial(ctx, view, b); err != nil {
			return err
		}
	}
	return nil
}

func (s *safetyRun) hostLossTrial(ctx context.Context, view *faultproxy.View, b bench.Locker) error {
	key := "safety-host-loss-" + randomHex()
	if err := view.ReachAll(); err != nil {
		return err
	}
	// A fresh client per trial: the last one's connections ended with the
	// restore.
	a, err := s.env.Contender.Open(ctx, view.Addrs(), s.env.Lease)
	if err != nil {
		return fmt.Errorf("safety: opening A through the proxy: %w", err)
	}
	defer a.Close()
	actx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	ha, err := a.Acquire(actx, key)
	if err != nil {
		return fmt.Errorf("safety: A's acquire: %w", err)
	}
	ga := guardedstore.Grant{Client: "A", Lock: key, Token: tokenOf(ha.Token()), At: check.Now()}
	s.write(ctx, "A", key, ga.Token)

	for _, l := range view.Links {
		if err := l.Blackhole(); err != nil {
			return err
		}
	}
	// A keeps working: it writes while it believes it holds the lock.
	lost := watchLost(ha)
	writer := make(chan struct{})
	go func() {
		defer close(writer)
		tick := time.NewTicker(hostLossWriteEvery)
		defer tick.Stop()
		for {
			select {
			case <-lost.done:
				return
			case <-tick.C:
			}
			select {
			case <-lost.done: // checked before every write
				return
			default:
				s.write(ctx, "A", key, ga.Token)
			}
		}
	}()
	defer func() {
		release(ctx, ha) // closes Lost, which ends the writer
		<-writer
	}()

	hb, bAt, err := acquireWithin(ctx, b, key, s.grantBound())
	if errors.Is(err, errNotGranted) {
		// The lock stays with the cut-off holder: safe, not available.
		s.count(results.SafetyMetrics.NotGranted)
		ga.End = lost.end()
		s.addGrants(ga)
		return view.ReachAll()
	}
	if err != nil {
		return err
	}
	gb := guardedstore.Grant{Client: "B", Lock: key, Token: tokenOf(hb.Token()), At: bAt}
	s.write(ctx, "B", key, gb.Token)
	select {
	case <-lost.done:
		ga.End = lost.at
		s.addMargin(float64(gb.At-ga.End) / float64(time.Millisecond))
	case <-time.After(s.grantBound()):
		// A still believes it holds the lock: no margin to give, a
		// double grant in the analysis.
		s.count(results.SafetyMetrics.NeverLearned)
		ga.End = check.Now()
	case <-ctx.Done():
		return ctx.Err()
	}
	release(ctx, hb)
	gb.End = check.Now()
	if err := view.ReachAll(); err != nil {
		return err
	}
	s.addGrants(ga, gb)
	return nil
}

// clockJump runs the clock-jump trials on servers of the contender's spec
// started under the clock interposer for this run.
func (s *safetyRun) clockJump(ctx context.Context, variant string, trials int) error {
	shifter := s.env.Deployment.(bench.ClockShifter) // checked by applies
	servers, stop, err := shifter.StartClockShifted(ctx, s.env.Contender.Server)
	if err != nil {
		return fmt.Errorf("safety: starting clock-shifted servers: %w", err)
	}
	defer stop()
	addrs := make([]string, len(servers))
	for i, sv := range servers {
		addrs[i] = sv.Addr()
	}
	// Each client reaches the servers through its own view, so that the
	// five-master sequence can give each a partial view; the single
	// server is reached directly.
	aAddrs, bAddrs := addrs, addrs
	var aView, bView *faultproxy.View
	if variant == ClockJumpQuorum {
		proxy := faultproxy.New()
		defer proxy.Close()
		if aView, err = proxy.View("A", addrs); err != nil {
			return err
		}
		if bView, err = proxy.View("B", addrs); err != nil {
			return err
		}
		aAddrs, bAddrs = aView.Addrs(), bView.Addrs()
	}
	a, err := s.env.Contender.Open(ctx, aAddrs, s.env.Lease)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := s.env.Contender.Open(ctx, bAddrs, s.env.Lease)
	if err != nil {
		return err
	}
	defer b.Close()

	jumped := servers[0]
	if variant == ClockJumpQuorum {
		jumped = servers[2] // master 3
	}
	for range trials {
		if err := s.clockJumpTrial(ctx, a, b, aView, bView, jumped); err != nil {
			return err
		}
	}
	return nil
}

func (s *safetyRun) clockJumpTrial(ctx context.Context, a, b bench.Locker, aView, bView *faultproxy.View, jumped bench.ClockShiftedServer) error {
	key := "safety-clock-" + randomHex()
	if aView != nil {
		// Kleppmann: A reaches masters 1-3, B masters 3-5.
		if err := aView.ReachOnly(0, 1, 2); err != nil {
			return err
		}
		if err := bView.ReachOnly(2, 3, 4); err != nil {
			return err
		}
		defer func() { _, _ = aView.ReachAll(), bView.ReachAll() }()
	}
	actx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	ha, err := a.Acquire(actx, key)
	if err != nil {
		return fmt.Errorf("safety: A's acquire: %w", err)
	}
	ga := guardedstore.Grant{Client: "A", Lock: key, Token: tokenOf(ha.Token()), At: check.Now()}
	lost := watchLost(ha)
	s.write(ctx, "A", key, ga.Token)

	if err := jumped.ShiftClock(ctx, jumpLeases*s.env.Lease); err != nil {
		return fmt.Errorf("safety: clock jump: %w", err)
	}
	defer func() {
		if err := jumped.ShiftClock(context.WithoutCancel(ctx), 0); err != nil {
			s.note(err)
		}
	}()
	hb, bAt, err := acquireWithin(ctx, b, key, s.grantBound())
	if errors.Is(err, errNotGranted) {
		// The step did not free the lock. It can land inside one of A's
		// extensions: the script reads the key on the old clock and
		// re-arms its TTL on the new one, so the key lives on (seen in
		// the server's MONITOR, about one trial in 30 on a loaded
		// machine). With five masters, B may also get no try whose three
		// answers come within redsync's per-try timeout (5% of the
		// lease). Either way no second holder existed: counted, as a
		// pause that freed nothing is.
		s.count(results.SafetyMetrics.NotGranted)
		ga.End = lost.end()
		release(ctx, ha)
		s.addGrants(ga)
		return nil
	}
	if err != nil {
		return err
	}
	gb := guardedstore.Grant{Client: "B", Lock: key, Token: tokenOf(hb.Token()), At: bAt}
	s.write(ctx, "B", key, gb.Token)
	// A writes if it has not been told yet, as a careful holder would
	// (Lost checked right before the write).
	select {
	case <-ha.Lost():
	default:
		s.write(ctx, "A", key, ga.Token)
	}
	ga.End = lost.end()
	release(ctx, hb)
	gb.End = check.Now()
	release(ctx, ha)
	s.addGrants(ga, gb)
	return nil
}

// lostWatch records when a held lock's Lost closed (it closes at Release
// at the latest, which ends the watching goroutine).
type lostWatch struct {
	done chan struct{}
	at   check.Mono
}

func watchLost(h bench.Held) *lostWatch {
	w := &lostWatch{done: make(chan struct{})}
	go func() {
		<-h.Lost()
		w.at = check.Now()
		close(w.done)
	}()
	return w
}

// end is the end of the holder's belief for the analysis: when it learned
// it lost the lock, or now if it has not learned yet (it believes longer
// still, so now can only undercount).
func (w *lostWatch) end() check.Mono {
	select {
	case <-w.done:
		return w.at
	default:
		return check.Now()
	}
}

func (s *safetyRun) addGrants(g ...guardedstore.Grant) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants = append(s.grants, g...)
}

func (s *safetyRun) addMargin(ms float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.margins = append(s.margins, ms)
}

func (s *safetyRun) count(m results.MetricSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[m.Name]++
}

func (s *safetyRun) note(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = load.NoteError(s.errs, err.Error())
}
