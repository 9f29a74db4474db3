package report

import (
	"fmt"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// decisionSection opens the report: the network path the verdicts hold
// for, then for each use case (analysis.UseCases) its verdict as the
// analysis words it, the figures behind it and its caveat, and its
// verdict under each other profile of a sweep (all) where the pick
// changes; the workload scenario's ranking where the run has one; then
// the capability matrix.
func (f *figures) decisionSection(d *document, all *results.Results) {
	t := table{head: []string{"use case", "verdict", "figures", "caveat"}, leftAligned: true, cards: true}
	v := analysis.Verdicts(all)
	for _, c := range v.Cases {
		t.rows = append(t.rows, useCaseRow(c.Advice, c.Title, c.Caveat))
		for _, at := range c.Profiles {
			t.rows = append(t.rows, useCaseRow(at.Advice, "at "+at.Profile+": "+c.Title, "as above"))
		}
	}
	workloads, oneRep := f.workloadRows()
	if len(t.rows) == 0 && len(workloads.rows) == 0 && len(f.a.CapabilityIDs()) == 0 {
		return
	}
	d.h2("Which lock for which job")
	d.p(v.Scope)
	d.p("A lock is used when every capability its row requires (C1, …: the matrix below) held in every repetition, then ranked by the first figure named; “worse”: the next lock's median over the pick's (range over their repetitions); “~” a tie; n repetitions; ✗ C4: C4 did not hold.")
	if len(t.rows) > 0 {
		d.add(t)
	}
	if len(workloads.rows) > 0 {
		text := "Your own workloads, each ranking for its file's traffic only: every threshold passed first, then by acquire p99 from the intended start (the rule and each whole ranking: the appendix)."
		if oneRep {
			text += fmt.Sprintf(" One repetition: only figures %g× apart are ranked apart.", float64(singleRunFactor))
		}
		d.p(text)
		d.add(workloads)
	}
	f.capabilityMatrix(d)
}

// workloadRows is a row per workload file the run measured: the locks in
// first place and the ranking; oneRep says whether every ranking rests on
// one repetition.
func (f *figures) workloadRows() (t table, oneRep bool) {
	t = table{head: []string{"workload", "this run supports", "ranking"}, leftAligned: true}
	oneRep = true
	for _, v := range f.a.Variants(workloadScenario) {
		wr := f.a.RankWorkload(workloadScenario, v)
		if row, ok := workloadRow(v, wr); ok {
			t.rows = append(t.rows, row)
			oneRep = oneRep && (!wr.Ranked() || wr.OneRepetition())
		}
	}
	return t, oneRep
}

// workloadRow is the decision row of workload v: the contenders in first
// place, or why none is; false when fewer than two contenders ran it.
func workloadRow(v string, wr analysis.WorkloadRanking) ([]cell, bool) {
	if len(wr.Ranks) < 2 {
		return nil, false
	}
	supports := "not ranked"
	figures := wr.Why
	if wr.Ranked() {
		first := wr.First()
		supports = strings.Join(first, ", ")
		switch {
		case !wr.Ranks[0].PassesAll:
			supports = "none passes every threshold; closest: " + supports
		case len(first) > 1:
			supports += " (tie)"
		}
		figures = wr.Label + ": " + workloadBrief(wr) + "."
		if wr.Why != "" {
			figures = wr.Label + " (" + wr.Why + "): " + workloadBrief(wr) + "."
		}
	}
	return []cell{{text: v}, {text: supports}, {text: figures}}, true
}

// useCaseRow lays out a use case's verdict as the analysis words it,
// under title: the line, the figures behind it and the caveat.
func useCaseRow(a analysis.Advice, title, caveat string) []cell {
	if a.Requires != "" {
		title += " — " + a.Requires
	}
	return []cell{{text: title}, {text: a.Line}, {text: strings.Join(a.Figures, " ")}, {text: caveat}}
}

// decisionShown is how many ranked locks a decision row names; the
// section's own tables rank them all.
const decisionShown = 3

// topOf keeps the first decisionShown entries of a ranking, and the
// entries tied with the last of them up to twice as many; more(es) says
// how many it left out.
func topOf(es []analysis.Entry) []analysis.Entry {
	n := min(decisionShown, len(es))
	for n < min(len(es), 2*decisionShown) && es[n].Place == es[n-1].Place {
		n++
	}
	return es[:n]
}
