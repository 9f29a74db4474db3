package report

// The chaos soak (make bench-chaos): every lock under one long seeded
// schedule, with bounds a user can quote. Its run's chaos section adds,
// per lock and per fault kind, the running double holders and the stale
// writes the fenced store accepted as rates per applied fault with Wilson
// 95% intervals, and the CPU of each step's clients and servers (the
// steps may run side by side). Another run's chaos section links the
// newest soak of its reports folder. The figures are the records' chaos
// data (results.Chaos).

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// isSoak reports whether r is a chaos soak run.
func isSoak(r *results.Results) bool {
	_, ok := r.Parameters.Scenario["chaos"][results.ChaosSoakSetting]
	return ok
}

// soakRef is a soak run of the same reports folder, for the link.
type soakRef struct {
	dir string // the run folder's name
	r   *results.Results
}

// newestSoak returns the newest soak run among runDir's siblings
// (runDir itself left out), nil when there is none.
func newestSoak(runDir string) *soakRef {
	abs, err := filepath.Abs(runDir)
	if err != nil {
		return nil
	}
	paths, err := filepath.Glob(filepath.Join(filepath.Dir(abs), "*", ResultsFile))
	if err != nil {
		return nil
	}
	var best *soakRef
	for _, p := range paths {
		dir := filepath.Dir(p)
		if dir == abs {
			continue
		}
		r, err := results.Load(p)
		if err != nil || !isSoak(r) {
			continue
		}
		if best == nil || r.StartedAt.After(best.r.StartedAt) {
			best = &soakRef{dir: filepath.Base(dir), r: r}
		}
	}
	return best
}

// soakLink says where the newest soak is, in a run that is not one.
func (f *figures) soakLink(d *document) {
	if f.soak == nil || isSoak(f.r) {
		return
	}
	s := f.soak
	d.p(fmt.Sprintf("This short step's intervals are wide; the newest chaos soak (make bench-chaos, %s) bounds each lock per fault kind: [%s](../%s/%s).",
		s.r.StartedAt.UTC().Format("2006-01-02"), s.dir, s.dir, MarkdownFile))
}

// chaosSchedule says what each contender took of the one schedule: the
// faults applied of each kind, to every contender alike or to some (the
// others skipped the kind, or took another count). The schedule is the
// same; what a contender can take of it is not.
func chaosSchedule(runs []analysis.ChaosRecord) string {
	var groups []string            // "for every contender", "for redis only (skipped by …)"
	kinds := map[string][]string{} // group → "kind n" in kind order
	for _, k := range chaosKindsOf(runs) {
		byCount := map[int][]string{}
		var skipped []string
		for _, r := range runs {
			v := r.Chaos.Verdict
			if v.Skipped[k] > 0 && v.Faults[k] == 0 {
				skipped = append(skipped, r.Contender)
				continue
			}
			byCount[v.Faults[k]] = append(byCount[v.Faults[k]], r.Contender)
		}
		for _, n := range slices.Sorted(maps.Keys(byCount)) {
			who := everyContender
			if len(byCount[n]) < len(runs) {
				who = "for " + strings.Join(byCount[n], ", ") + " only"
				if len(skipped) > 0 {
					who += " (others skip it)"
				}
			}
			if _, ok := kinds[who]; !ok {
				groups = append(groups, who)
			}
			kinds[who] = append(kinds[who], fmt.Sprintf("%s %d", k, n))
		}
	}
	// The kinds every contender took alike are counted in the appendix
	// (and in a soak's bounds): here only that they were, and the rest.
	var parts []string
	for _, g := range groups {
		if g != everyContender {
			parts = append(parts, strings.Join(kinds[g], ", ")+" "+g)
		}
	}
	switch {
	case len(parts) == 0:
		return "Every contender took as many faults of each kind."
	case len(kinds[everyContender]) > 0:
		return "Every contender took as many faults of each kind, but " + strings.Join(parts, "; ") + "."
	}
	return "Faults applied per kind: " + strings.Join(parts, "; ") + "."
}

const everyContender = "for every contender"

// soakBounds is the soak's own part of the chaos section.
func (f *figures) soakBounds(d *document, runs []analysis.ChaosRecord) {
	if !isSoak(f.r) {
		return
	}
	kinds := chaosKindsOf(runs)
	d.h3("Bounds per fault kind (soak)")
	d.p("The schedule: " + f.r.Parameters.Scenario["chaos"][results.ChaosSoakSetting] + ". " +
		"Each cell is k/n: the applied faults of the kind with at least one violation blamed on them (k), of the faults of the kind applied to that lock (n), and the Wilson 95% interval of the rate; at k = 0 its upper bound. " +
		"A running double holder is an overlap whose earlier holder was not frozen by a pause (the lock's failure, not the lease's); a stale write behind the fence is one the fenced store accepted after another client's newer grant. " +
		"The last column counts the violations in all: one blamed on no fault is counted there and in no rate.")
	d.p("Running double holders per applied fault:")
	d.add(soakTable(runs, kinds, func(r analysis.ChaosRecord) (*results.ChaosRate, map[string]results.ChaosRate, int, string) {
		v := r.Chaos.Verdict
		running := 0
		if v.Running != nil {
			running = *v.Running
		}
		return v.RunningRate, v.RunningRateByKind, running, ""
	}))
	d.p("Stale writes accepted by the fenced store per applied fault:")
	d.add(soakTable(runs, kinds, func(r analysis.ChaosRecord) (*results.ChaosRate, map[string]results.ChaosRate, int, string) {
		i := slices.IndexFunc(r.Chaos.Verdict.Stores, func(s results.ChaosStore) bool { return s.Fenced })
		switch {
		case i < 0:
			return nil, nil, 0, "—"
		case !r.Chaos.Tokens:
			return nil, nil, 0, "no tokens: the fenced store rejects every write"
		}
		s := r.Chaos.Verdict.Stores[i]
		return s.StaleRate, s.StaleRateByKind, s.StaleWrites.Count, ""
	}))
	if t, sources, ok := f.soakCPU(runs); ok {
		side := "one after another"
		if n, ok := f.r.Parameters.Scenario["chaos"]["side_by_side"]; ok {
			side = "side by side: " + n
		}
		d.p(fmt.Sprintf("The CPU time of each step's client processes (the load generator, /proc/<pid>/stat) and of its servers (%s), as a share of one core over the step (a server killed by the schedule counts from its last restart: a lower bound); the machine has %d cores, and the steps ran %s.", strings.Join(sources, "; "), f.r.Environment.Cores, side))
		d.add(t)
	}
}

// soakTable is one violation's rates per lock and kind; of returns the
// rate, its split by kind and the violations in all, or why there are
// none.
func soakTable(runs []analysis.ChaosRecord, kinds []string, of func(analysis.ChaosRecord) (*results.ChaosRate, map[string]results.ChaosRate, int, string)) table {
	t := table{head: append(append([]string{"lock", "all faults"}, kinds...), "violations in all")}
	for _, r := range runs {
		rate, byKind, count, why := of(r)
		row := []cell{{text: r.Contender}}
		if why != "" || rate == nil {
			if why == "" {
				why = "not recorded (an older run)"
			}
			row = append(row, cell{text: why})
			for range len(t.head) - 2 {
				row = append(row, cell{text: "—"})
			}
			t.rows = append(t.rows, row)
			continue
		}
		row = append(row, cell{text: rateText(*rate)})
		for _, k := range kinds {
			v := r.Chaos.Verdict
			kr, ok := byKind[k]
			switch {
			case ok:
				row = append(row, cell{text: rateText(kr)})
			case v.Skipped[k] > 0:
				row = append(row, cell{text: fmt.Sprintf("skipped (%d)", v.Skipped[k])})
			default:
				row = append(row, cell{text: "—"})
			}
		}
		row = append(row, cell{text: fmt.Sprint(count)})
		t.rows = append(t.rows, row)
	}
	return t
}

// soakCPU is the CPU of each step's clients and servers, as a share of
// one core over the step, and how the servers' was read.
func (f *figures) soakCPU(runs []analysis.ChaosRecord) (table, []string, bool) {
	sources := map[string]bool{}
	t := table{head: []string{"lock", "step (s)", "clients' CPU (% of a core)", "servers' CPU (% of a core)"}}
	for _, r := range runs {
		c := r.Chaos.CPU
		if c == nil || c.Seconds <= 0 {
			continue
		}
		server := "not read"
		if c.ServerSource != "" {
			server = fmt.Sprintf("%.1f", c.ServerMS/c.Seconds/10)
			sources[c.ServerSource] = true
		}
		t.rows = append(t.rows, []cell{{text: r.Contender}, {text: fmt.Sprintf("%.0f", c.Seconds)},
			{text: fmt.Sprintf("%.1f", c.ClientsMS/c.Seconds/10)}, {text: server}})
	}
	return t, slices.Sorted(maps.Keys(sources)), len(t.rows) > 0
}
