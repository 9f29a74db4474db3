package scenarios

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/nemesis"
	"github.com/monolock/monolock-bench/bench/results"
)

// record keeps the merged history in the run folder, checks it and turns
// the verdict into the step's record: figures, counts, errors and the
// chaos record (schedule, outcomes, verdicts, timeline).
func (s *chaosStep) record(h *check.History, sched nemesis.Schedule, outcomes []nemesis.Outcome) (results.Raw, error) {
	name := s.env.Contender.Name
	c := &results.Chaos{Seed: sched.Config.Seed, CPU: s.cpu}
	opts := check.Options{Name: name}
	if out := s.env.OutDir; out != "" {
		dir := filepath.Join(out, HistoriesDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return results.Raw{}, fmt.Errorf("chaos: %w", err)
		}
		path := filepath.Join(dir, name+".jsonl")
		f, err := os.Create(path)
		if err != nil {
			return results.Raw{}, fmt.Errorf("chaos: %w", err)
		}
		err = h.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return results.Raw{}, fmt.Errorf("chaos: writing the history: %w", err)
		}
		c.History = filepath.ToSlash(filepath.Join(HistoriesDir, name+".jsonl"))
		opts.VisualizationDir = dir
	}
	v := check.Check(h, opts)

	var err error
	if c.Schedule, err = json.Marshal(sched); err != nil {
		return results.Raw{}, fmt.Errorf("chaos: %w", err)
	}
	if c.Outcomes, err = json.Marshal(outcomes); err != nil {
		return results.Raw{}, fmt.Errorf("chaos: %w", err)
	}
	c.Tokens = hasTokens(h)
	c.Verdict = s.verdict(h, v)
	c.Timeline = chaosTimeline(h)
	c.ServerRecord, c.NoServerRecord = serverRecordOf(s.env.Contender.WatchLockSource, s.env.Contender.NoLockWatch, v.Blame.Recorded)

	raw := results.Raw{Chaos: c, Errors: s.errs}
	raw.Metrics, c.Notes = chaosFigures(v, c.Tokens)
	if !c.Tokens {
		f := storeMetrics[check.StoreFenced]
		c.Notes = append(c.Notes, fmt.Sprintf("no fencing token: the fenced store rejected every write and read, so its figures (%s, %s, %s, %s) are left out", f.stale.Name, f.lost.Name, f.linearizable.Name, f.rate.Name))
	}
	for _, k := range nemesis.Kinds {
		kind := string(k)
		rate, ok := v.RateByKind[kind]
		if !ok {
			continue // no fault of the kind was applied
		}
		raw.Metrics = append(raw.Metrics,
			results.ChaosMetrics.FaultsUnder(kind).Of(float64(rate.Trials)),
			results.ChaosMetrics.ViolationRateUnder(kind).Of(rate.Hi))
	}
	kept := 0
	for _, hf := range c.Verdict.HolderFaults {
		if hf.Kept {
			kept++
		}
	}
	noHandover := 0.0
	if kept == len(c.Verdict.HolderFaults) {
		noHandover = 1
	}
	raw.Metrics = append(raw.Metrics,
		results.ChaosMetrics.GrantGapMax.Of(c.Verdict.GrantGapMaxMS),
		results.ChaosMetrics.FaultsOnHolder.Of(float64(len(c.Verdict.HolderFaults))),
		results.ChaosMetrics.LockKeptThroughFault.Of(float64(kept)),
		results.ChaosMetrics.NoHandoverDuringHolderFault.Of(noHandover))
	raw.Counts = map[string]int64{
		"faults_scheduled": int64(len(sched.Faults)),
		"faults_skipped":   int64(len(h.Skipped)),
		"faults_failed":    int64(len(h.Failed)),
		"holds":            int64(v.Exclusion.Holds),
		"events":           int64(len(h.Events)),
	}
	return raw, nil
}

// serverRecordOf says how the servers' view was recorded, or why not: a
// watcher that recorded nothing at all (not even its start) is said so.
func serverRecordOf(source, missing string, recorded bool) (string, string) {
	switch {
	case source != "" && recorded:
		return source, ""
	case source != "":
		return "", "the watcher (" + source + ") recorded nothing"
	case missing != "":
		return "", missing
	}
	return "", "the contender records no server view"
}

// chaosFigures are the checkers' verdict as the chaos scenario's metrics:
// faults, operations, double holders, overlap time, the running overlaps
// by class where the servers' view was recorded, writes after the
// writer's lost notice, lost updates and the violation rate over all
// stores, grants out of token order, then each store's stale writes,
// lost updates, the holder's writes the fenced store refused,
// linearizability (left out when unknown, with a note) and violation
// rate. Without tokens the fenced store refused every write and there is
// no token order, so those figures say nothing and are left out.
func chaosFigures(v check.Verdict, tokens bool) (figures []results.Metric, notes []string) {
	cm := results.ChaosMetrics
	lost, afterLost := 0, 0
	for _, s := range v.Stores {
		lost += s.LostUpdates.Lost
		afterLost += s.StaleWrites.AfterLost
	}
	figures = []results.Metric{
		cm.Faults.Of(float64(v.Faults.Applied)),
		cm.Operations.Of(float64(v.Operations)),
		cm.DoubleHolders.Of(float64(v.Exclusion.Count)),
		cm.DoubleHoldersRunning.Of(float64(v.Exclusion.Running)),
		cm.DoubleHolderMs.Of(float64(v.Exclusion.Overlapped) / float64(time.Millisecond)),
		cm.WritesAfterLost.Of(float64(afterLost)),
		cm.LostUpdates.Of(float64(lost)),
		cm.ViolationRateHi.Of(v.Rate.Hi),
	}
	if b := v.Blame; b.Recorded {
		figures = append(figures, cm.OverlapsServerEarly.Of(float64(b.ServerEarly)), cm.OverlapsClientLate.Of(float64(b.ClientLate)),
			cm.OverlapsBoth.Of(float64(b.Both)), cm.OverlapsUnclassified.Of(float64(b.Unclassified)))
	}
	if tokens {
		figures = append(figures, cm.TokenOrderViolations.Of(float64(v.TokenOrder.Count)))
	}
	for _, s := range v.Stores {
		m, ok := storeMetrics[s.Store]
		if !ok || (!tokens && s.Store == check.StoreFenced) {
			continue
		}
		figures = append(figures, m.stale.Of(float64(s.StaleWrites.Count)), m.lost.Of(float64(s.LostUpdates.Lost)))
		if s.Store == check.StoreFenced {
			// The unfenced store refuses nothing: its count would be a
			// figure that cannot move.
			figures = append(figures, cm.HolderWritesRefusedFenced.Of(float64(s.StaleWrites.RefusedHolder.Count)))
		}
		switch s.Linearizability.Valid {
		case check.Valid:
			figures = append(figures, m.linearizable.Of(1))
		case check.Invalid:
			figures = append(figures, m.linearizable.Of(0))
		default:
			notes = append(notes, fmt.Sprintf("%s left out: %s", m.linearizable.Name, s.Linearizability.Reason))
		}
		figures = append(figures, m.rate.Of(s.Rate.Hi))
	}
	return figures, notes
}

// storeMetrics are the chaos metrics of each of the scenario's two
// stores.
var storeMetrics = map[string]struct{ stale, lost, linearizable, rate results.MetricSpec }{
	check.StoreFenced: {results.ChaosMetrics.StaleWritesFenced, results.ChaosMetrics.LostUpdatesFenced,
		results.ChaosMetrics.LinearizableFenced, results.ChaosMetrics.ViolationRateHiFenced},
	check.StoreUnfenced: {results.ChaosMetrics.StaleWritesUnfenced, results.ChaosMetrics.LostUpdatesUnfenced,
		results.ChaosMetrics.LinearizableUnfenced, results.ChaosMetrics.ViolationRateHiUnfenced},
}

// hasTokens reports whether any grant of h carried a token.
func hasTokens(h *check.History) bool {
	return slices.ContainsFunc(h.Ops, func(o check.Operation) bool {
		return o.Invoke.F == check.Acquire && o.Outcome() == check.OK && o.Done.Token != nil
	})
}

// ms converts a time of h to milliseconds from its start, to 0.1 ms.
func msOf(h *check.History, t check.Mono) float64 {
	return math.Round(float64(t-h.Start())/1e5) / 10
}

func (s *chaosStep) verdict(h *check.History, v check.Verdict) results.ChaosVerdict {
	out := results.ChaosVerdict{
		Valid: string(v.Valid), Operations: v.Operations,
		Faults: v.Faults.ByKind, Skipped: v.Faults.Skipped, SkipReasons: v.Faults.SkipReasons, Failed: v.Faults.Failed,
		Exclusion:  chaosCheck(h, v.Exclusion.Valid, v.Exclusion.Findings, ""),
		Running:    &v.Exclusion.Running,
		Holds:      v.Exclusion.Holds,
		OverlapMS:  float64(v.Exclusion.Overlapped) / float64(time.Millisecond),
		Rate:       chaosRate(v.Rate),
		RateByKind: chaosRates(v.RateByKind),
	}
	running := chaosRate(v.RunningRate)
	out.RunningRate, out.RunningRateByKind = &running, chaosRates(v.RunningRateByKind)
	if f := v.Exclusion.FirstRunning; f != nil {
		out.FirstRunning = chaosViolation(h, *f)
	}
	for _, st := range v.Stores {
		cs := results.ChaosStore{
			Store: st.Store, Valid: string(st.Valid), Fenced: st.Linearizability.Fenced,
			Writes:         st.StaleWrites.Writes,
			Linearizable:   chaosCheck(h, st.Linearizability.Valid, check.Findings{}, st.Linearizability.Reason),
			StaleWrites:    chaosCheck(h, st.StaleWrites.Valid, st.StaleWrites.Findings, ""),
			Rejected:       st.StaleWrites.Rejected,
			UnknownOutcome: st.StaleWrites.UnknownOutcome,
			LostUpdates:    chaosCheck(h, st.LostUpdates.Valid, st.LostUpdates.Findings, ""),
			Acknowledged:   st.LostUpdates.Acknowledged,
			Final:          st.LostUpdates.Final,
			Rate:           chaosRate(st.Rate),
			RateByKind:     chaosRates(st.RateByKind),
		}
		stale := chaosRate(st.StaleRate)
		cs.StaleRate, cs.StaleRateByKind = &stale, chaosRates(st.StaleRateByKind)
		cs.LostUpdates.Count = st.LostUpdates.Lost
		if st.Linearizability.First != nil {
			cs.Linearizable.Count = 1
			cs.Linearizable.First = chaosViolation(h, *st.Linearizability.First)
		}
		if p := st.Linearizability.Visualization; p != "" && s.env.OutDir != "" {
			if rel, err := filepath.Rel(s.env.OutDir, p); err == nil {
				cs.Visualization = filepath.ToSlash(rel)
			}
		}
		for _, op := range h.Ops {
			if op.Invoke.Store == st.Store && (op.Invoke.F == check.Write || op.Invoke.F == check.Increment) && op.Accepted() {
				cs.Accepted++
			}
		}
		out.Stores = append(out.Stores, cs)
	}
	if v.Blame.Recorded {
		out.Blame = &results.ChaosBlame{ServerEarly: v.Blame.ServerEarly, ClientLate: v.Blame.ClientLate, Both: v.Blame.Both, Unclassified: v.Blame.Unclassified}
		for _, o := range v.Blame.Overlaps {
			out.Blame.Overlaps = append(out.Blame.Overlaps, results.ChaosBlamed{
				AtMS: msOf(h, o.From), First: o.First.Process, Second: o.Second.Process, Blame: string(o.Blame), Server: o.Server, Why: o.Why})
		}
	}
	out.GrantGapMaxMS = grantGapMax(h)
	out.HolderFaults = holderFaults(h)
	return out
}

// clientFaultKinds are the fault kinds that act on a client.
var clientFaultKinds = []string{string(nemesis.ClientPause), string(nemesis.ClientHostLoss), string(nemesis.ClientPartition)}

// holderFaults finds the client faults that began while their target
// held the lock, and how long the lock took to reach another client.
func holderFaults(h *check.History) []results.ChaosHolderFault {
	holds := check.Holds(h)
	var grants []check.Operation // acquire ok, by completion
	for _, op := range h.Ops {
		if op.Invoke.F == check.Acquire && op.Outcome() == check.OK {
			grants = append(grants, op)
		}
	}
	slices.SortStableFunc(grants, func(a, b check.Operation) int { return cmp.Compare(a.Done.T, b.Done.T) })
	var out []results.ChaosHolderFault
	for _, f := range h.Faults {
		if !slices.Contains(clientFaultKinds, f.Fault.Kind) {
			continue
		}
		held := slices.ContainsFunc(holds, func(hd check.Hold) bool {
			return hd.Process == f.Fault.Target && hd.From <= f.From && f.From < hd.To
		})
		if !held {
			continue
		}
		hf := results.ChaosHolderFault{ID: f.ID, Kind: f.Fault.Kind, Target: f.Fault.Target, FaultMS: msOf(h, f.To) - msOf(h, f.From), HandoverMS: -1, Kept: true}
		for _, g := range grants {
			if g.Done.T > f.From && g.Invoke.Process != f.Fault.Target {
				hf.HandoverMS = math.Round(float64(g.Done.T-f.From)/1e5) / 10
				hf.Kept = g.Done.T >= f.To
				break
			}
		}
		out = append(out, hf)
	}
	return out
}

func chaosCheck(h *check.History, valid check.Validity, f check.Findings, reason string) results.ChaosCheck {
	c := results.ChaosCheck{Valid: string(valid), Count: f.Count, Reason: reason, Unattributed: f.Unattributed}
	if len(f.ByKind) > 0 {
		c.ByKind = f.ByKind
	}
	if f.First != nil {
		c.First = chaosViolation(h, *f.First)
	}
	return c
}

func chaosViolation(h *check.History, v check.Violation) *results.ChaosViolation {
	out := &results.ChaosViolation{AtMS: msOf(h, v.At), What: v.What, Faults: v.Faults}
	for _, l := range v.Excerpt {
		line, err := json.Marshal(l.Event)
		if err != nil {
			continue // an event of a validated history always encodes
		}
		out.Excerpt = append(out.Excerpt, results.ChaosLine{AtMS: msOf(h, l.T), Process: l.Process, Event: string(line), Mark: l.Mark, Elided: l.Elided})
	}
	return out
}

func chaosRate(r check.Rate) results.ChaosRate {
	return results.ChaosRate{Violations: r.Violations, Trials: r.Trials, Rate: r.Rate, Lo: r.Lo, Hi: r.Hi}
}

func chaosRates(rs map[string]check.Rate) map[string]results.ChaosRate {
	if len(rs) == 0 {
		return nil
	}
	out := map[string]results.ChaosRate{}
	for k, r := range rs {
		out[k] = chaosRate(r)
	}
	return out
}

// grantGapMax is the longest time between two consecutive grants'
// completions, in ms.
func grantGapMax(h *check.History) float64 {
	var grants []check.Mono
	for _, op := range h.Ops {
		if op.Invoke.F == check.Acquire && op.Outcome() == check.OK {
			grants = append(grants, op.Done.T)
		}
	}
	slices.Sort(grants)
	var gap check.Mono
	for i := 1; i < len(grants); i++ {
		gap = max(gap, grants[i]-grants[i-1])
	}
	return math.Round(float64(gap)/1e5) / 10
}

// chaosTimeline draws h as lanes: per client its acquires (wait bars) and its
// holds (ended by a release, a lost notice or the history's end), and
// every applied fault.
func chaosTimeline(h *check.History) results.ChaosTimeline {
	t := results.ChaosTimeline{SpanMS: msOf(h, h.End())}
	lanes := map[string]*results.ChaosLane{}
	lane := func(p string) *results.ChaosLane {
		if l, ok := lanes[p]; ok {
			return l
		}
		lanes[p] = &results.ChaosLane{Client: p}
		return lanes[p]
	}
	for _, op := range h.Ops {
		if op.Invoke.F != check.Acquire {
			continue
		}
		to := h.End()
		if op.Done != nil {
			to = op.Done.T
		}
		l := lane(op.Invoke.Process)
		l.Bars = append(l.Bars, results.ChaosBar{FromMS: msOf(h, op.Invoke.T), ToMS: msOf(h, to), Kind: results.BarWait})
	}
	for _, hd := range check.Holds(h) {
		kind := results.BarHold
		switch hd.Ended {
		case check.EndedLost:
			kind = results.BarLost
		case check.EndedHistory:
			kind = results.BarUnended
		}
		l := lane(hd.Process)
		l.Bars = append(l.Bars, results.ChaosBar{FromMS: msOf(h, hd.From), ToMS: msOf(h, hd.To), Kind: kind})
	}
	names := make([]string, 0, len(lanes))
	for n := range lanes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		l := lanes[n]
		slices.SortStableFunc(l.Bars, func(a, b results.ChaosBar) int {
			switch {
			case a.FromMS < b.FromMS:
				return -1
			case a.FromMS > b.FromMS:
				return 1
			}
			return 0
		})
		t.Lanes = append(t.Lanes, *l)
	}
	for _, f := range h.Faults {
		t.Faults = append(t.Faults, results.ChaosFaultSpan{ID: f.ID, Kind: f.Fault.Kind, Target: f.Fault.Target, FromMS: msOf(h, f.From), ToMS: msOf(h, f.To)})
	}
	return t
}
