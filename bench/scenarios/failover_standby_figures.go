package scenarios

import (
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/bench/results"
)

// standbyRaw reads the figures of a standby variant: the steady load's
// as for restart, with the move as the restart, plus D and what the shared
// load shows about safety.
func standbyRaw(tl *timeline, sh *sharedLoad, ft faultTimes, lease time.Duration, fence bool) results.Raw {
	fo := results.FailoverMetrics
	raw := failoverRaw(tl, ft)
	// No restart: the standby was running all along. Without the fence
	// the move is the fault: there is no fault window to read. The
	// tokens are read again below, over every grant of both loads.
	raw.Metrics = slices.DeleteFunc(raw.Metrics, func(m results.Metric) bool {
		switch m.Name {
		case fo.RestartMs.Name, fo.TokensMonotonic.Name, fo.TokenGap.Name, fo.TakeoverMs.Name, fo.TokensPromiseBroken.Name:
			return true
		case fo.GrantRateRatio.Name, fo.AcquireP99DuringFault.Name, fo.ReleaseP99DuringFault.Name:
			return !fence
		}
		return false
	})
	metric := func(m results.MetricSpec, v float64) {
		raw.Metrics = append(raw.Metrics, m.Of(v))
	}
	grants := pairGrants(tl, sh)
	if before, after, ok := tokensAround(grants, ft); ok {
		mono := 0.0
		if after > before {
			mono = 1
		}
		metric(fo.TokensMonotonic, mono)
		metric(fo.TokenGap, float64(after)-float64(before))
	}
	get := func(spec results.MetricSpec) (float64, bool) {
		for _, m := range raw.Metrics {
			if m.Name == spec.Name {
				return m.Value, true
			}
		}
		return 0, false
	}
	// D runs from the moment the fault is surely in effect: cutting a
	// link is a call to the delay line, which a loaded machine can delay
	// (fault_took_ms says by how much; D may be short by up to that).
	d := ft.restart.Sub(ft.faultDone)
	if fence {
		metric(fo.DetectionMs, ms(d))
		metric(fo.FaultTookMs, ms(ft.faultDone.Sub(ft.fault)))
		if gap, ok := get(fo.UnavailableMs); ok && d > 0 {
			metric(fo.GapOverD, gap/ms(d))
		}
		metric(fo.HolderStopLimitMs, ms(lease*4/5))
		// The documentation promises tokens above every earlier one only
		// when the standby takes over more than a second after the
		// primary's last grant (a token is the unix second of the latest
		// grant and a counter): takeover_ms says whether it did, and
		// tokens_promise_broken is recorded only then.
		if takeover, ok := takeover(grants, ft); ok {
			metric(fo.TakeoverMs, ms(takeover))
			if mono, ok := get(fo.TokensMonotonic); ok && takeover > time.Second {
				metric(fo.TokensPromiseBroken, 1-mono)
			}
		}
	}
	for _, at := range slices.SortedFunc(slices.Values(sh.longLost), time.Time.Compare) {
		if !at.Before(ft.faultDone) {
			metric(fo.HolderStopMs, ms(at.Sub(ft.faultDone)))
			break
		}
	}

	an := guardedstore.Analyze(sh.fenced.History(), sh.grants)
	unfenced := guardedstore.Analyze(sh.unfenced.History(), sh.grants)
	metric(fo.DoubleGrants, float64(len(an.DoubleGrants)))
	metric(fo.UnsafeWritesFenced, float64(len(an.Unsafe)))
	metric(fo.UnsafeWritesUnfenced, float64(len(unfenced.Unsafe)))
	metric(fo.FencedRejections, float64(an.RejectedByFencing))
	// The rest of the stale-token rejections are writes of a client no
	// later grant had superseded: the current owner refused because its
	// token is below an earlier owner's (the tokens went backwards).
	metric(fo.OwnerWritesRejected, float64(an.RejectedByFencing-an.Prevented))
	var old, fresh int
	for _, g := range append(slices.Clone(tl.grants), sh.events...) {
		switch {
		case g.attempt.Before(ft.restart) && !g.at.Before(ft.restart):
			old++
		case !g.attempt.Before(ft.restart):
			fresh++
		}
	}
	metric(fo.GrantsDialledBeforeMove, float64(old))
	metric(fo.GrantsDialledAfterMove, float64(fresh))
	raw.Counts["shared_grants"] = int64(len(sh.grants))
	raw.Counts["shared_failed_attempts"] = int64(sh.fails)
	raw.Counts["store_writes"] = int64(an.Writes)
	return raw
}

// stamped is one grant of a standby variant's loads: when its client
// had it, and its token.
type stamped struct {
	at      time.Time
	token   uint64
	tokenOK bool
}

// pairGrants are the grants of the steady and the shared load together.
func pairGrants(tl *timeline, sh *sharedLoad) []stamped {
	var out []stamped
	for _, g := range tl.grants {
		out = append(out, stamped{g.at, g.token, g.tokenOK})
	}
	for i, g := range sh.grants {
		s := stamped{at: sh.events[i].at}
		if g.Token != nil {
			s.token, s.tokenOK = *g.Token, true
		}
		out = append(out, s)
	}
	return out
}

// tokensAround returns the largest token granted before the fault and the
// smallest granted after the move; false without both.
func tokensAround(grants []stamped, ft faultTimes) (before, after uint64, ok bool) {
	var hasBefore, hasAfter bool
	for _, g := range grants {
		switch {
		case !g.tokenOK:
		case g.at.Before(ft.fault):
			before, hasBefore = max(before, g.token), true
		case !g.at.Before(ft.restart):
			if !hasAfter || g.token < after {
				after = g.token
			}
			hasAfter = true
		}
	}
	return before, after, hasBefore && hasAfter
}

// takeover is the time from the last grant before the fault (the
// primary's) to the first grant after the move (the standby's), as the
// clients saw them; false without both.
func takeover(grants []stamped, ft faultTimes) (time.Duration, bool) {
	var last, first time.Time
	for _, g := range grants {
		switch {
		case g.at.Before(ft.fault):
			if g.at.After(last) {
				last = g.at
			}
		case !g.at.Before(ft.restart):
			if first.IsZero() || g.at.Before(first) {
				first = g.at
			}
		}
	}
	if last.IsZero() || first.IsZero() {
		return 0, false
	}
	return first.Sub(last), true
}
