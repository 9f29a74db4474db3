package analysis

import (
	"slices"

	"github.com/monolock/monolock-bench/bench/results"
)

// A ChaosRow is one lock's chaos run in plain figures, Jepsen's checkers
// without the :valid? line: what a reader weighs is which violation, how
// many, under which faults.
type ChaosRow struct {
	Contender string
	// Running are the overlapping holds whose earlier holder was running:
	// the lock's failure. Frozen are those whose earlier holder was frozen
	// by a pause through the overlap: any lease lock has them, and only a
	// fencing token refuses the frozen holder's late writes.
	Running, Frozen Tally
	// StaleFenced are the stale writes the fenced store accepted.
	StaleFenced Tally
	// HolderFaults are the client faults that struck the holder; Kept
	// those through which no other client was granted the lock (the lock
	// was not freed while its holder was paused, cut off or partitioned),
	// Never those after which no other client was granted it before the
	// history ended.
	HolderFaults, Kept, Never int
	// RefusedHolder are the current holder's writes the fenced store
	// refused (tokens that went backwards lock the holder out);
	// TokenOrder the grants whose token was not above an earlier released
	// grant's; AfterLost the writes sent after the writer's own loss
	// notice.
	RefusedHolder, TokenOrder, AfterLost Tally
	// ServerEarly, ClientLate, Both and Unclassified are the running
	// double holders by whom the servers' own record lays them on (the
	// server granted early, the client learned late, both, no record
	// covers it); missing "no server record" where the contender records
	// none, and NoServerRecord then says why.
	ServerEarly, ClientLate, Both, Unclassified Tally
	NoServerRecord                              string
	// Faults are the faults applied by kind, in the nemesis's order, and
	// Skipped the kinds the lock or its backend cannot take.
	Faults  []KindCount
	Skipped []KindCount
}

// A Tally is a count of events, or why the run has none.
type Tally struct {
	N int
	// Missing says why there is no count: "no fencing tokens" (a figure
	// of tokens), "not recorded" (a run before its checker); "" when N
	// counts.
	Missing string
}

// KindCount is how many faults of one kind.
type KindCount struct {
	Kind string
	N    int
}

// ChaosKinds are the nemesis's fault kinds, in its order; a kind a record
// names that is not listed comes after them.
var ChaosKinds = []string{"client-pause", "client-host-loss", "client-partition", "server-kill", "server-pause", "clock-step"}

// Chaos returns a row per lock with a chaos record, in the order of
// Locks; the first record of a lock counts (the chaos step runs once).
func (run *Run) Chaos() []ChaosRow {
	var out []ChaosRow
	for _, c := range run.locks {
		for _, x := range run.r.Raw {
			if x.Contender == c && x.Chaos != nil {
				out = append(out, chaosRow(c, x))
				break
			}
		}
	}
	return out
}

// A ChaosRecord is one contender's record of the chaos soak: the
// schedule, the checkers' verdict, the timeline and the histories.
type ChaosRecord struct {
	Contender string
	Chaos     *results.Chaos
}

// ChaosRecords returns the chaos soak's records, locks first then
// floors; the first record of a contender counts.
func (run *Run) ChaosRecords() []ChaosRecord {
	var out []ChaosRecord
	for _, c := range append(run.Locks(), run.floors...) {
		for _, x := range run.raws[rawKey{"chaos", c, "soak"}] {
			if x.Chaos != nil {
				out = append(out, ChaosRecord{c, x.Chaos})
				break
			}
		}
	}
	return out
}

func chaosRow(c string, x results.Raw) ChaosRow {
	ch, v := x.Chaos, x.Chaos.Verdict
	row := ChaosRow{Contender: c}
	row.Running, row.Frozen = Tally{Missing: "not recorded"}, Tally{Missing: "not recorded"}
	if v.Running != nil {
		row.Running = Tally{N: *v.Running}
		row.Frozen = Tally{N: v.Exclusion.Count - *v.Running}
	}
	tokens := func(t Tally) Tally {
		if !ch.Tokens {
			return Tally{Missing: "no fencing tokens"}
		}
		return t
	}
	row.StaleFenced = tokens(Tally{Missing: "not recorded"})
	for _, s := range v.Stores {
		if s.Fenced {
			row.StaleFenced = tokens(Tally{N: s.StaleWrites.Count})
		}
	}
	for _, hf := range v.HolderFaults {
		row.HolderFaults++
		if hf.Kept {
			row.Kept++
		}
		if hf.HandoverMS < 0 {
			row.Never++
		}
	}
	figure := func(m results.MetricSpec) Tally {
		for _, f := range x.Metrics {
			if f.Name == m.Name {
				return Tally{N: int(f.Value)}
			}
		}
		return Tally{Missing: "not recorded"}
	}
	cm := results.ChaosMetrics
	row.RefusedHolder = tokens(figure(cm.HolderWritesRefusedFenced))
	row.TokenOrder = tokens(figure(cm.TokenOrderViolations))
	row.AfterLost = figure(cm.WritesAfterLost)
	if b := v.Blame; b != nil {
		row.ServerEarly, row.ClientLate, row.Both, row.Unclassified = Tally{N: b.ServerEarly}, Tally{N: b.ClientLate}, Tally{N: b.Both}, Tally{N: b.Unclassified}
	} else {
		none := Tally{Missing: "no server record"}
		row.ServerEarly, row.ClientLate, row.Both, row.Unclassified = none, none, none, none
		row.NoServerRecord = ch.NoServerRecord
		if row.NoServerRecord == "" {
			row.NoServerRecord = "recorded before the servers' view was"
		}
	}
	row.Faults, row.Skipped = byKind(v.Faults), byKind(v.Skipped)
	return row
}

// byKind lists the non-zero counts of m in ChaosKinds' order, others
// after in name order.
func byKind(m map[string]int) []KindCount {
	var out []KindCount
	seen := map[string]bool{}
	for _, k := range ChaosKinds {
		seen[k] = true
		if m[k] > 0 {
			out = append(out, KindCount{k, m[k]})
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] && m[k] > 0 {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		out = append(out, KindCount{k, m[k]})
	}
	return out
}

// Applied is how many faults were applied in all.
func (r ChaosRow) Applied() int {
	n := 0
	for _, k := range r.Faults {
		n += k.N
	}
	return n
}
