package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// decisionSection opens the report: for each use case (useCases) the
// locks this run supports, the figures that decide it, its caveat and the
// rule that picked it; the workload scenario's ranking where the run has
// one; then the capability matrix.
func (f *figures) decisionSection(d *document) {
	t := table{head: []string{"use case", "this run supports", "deciding figures", "caveat", "rule"}, leftAligned: true, cards: true}
	for _, u := range analysis.UseCases {
		if p, ok := f.a.Decide(u); ok {
			t.rows = append(t.rows, f.useCaseRow(p))
		}
	}
	workloads, oneRep := f.workloadRows()
	if len(t.rows) == 0 && len(workloads.rows) == 0 && len(f.a.CapabilityIDs()) == 0 {
		return
	}
	d.h2("Which lock for which job")
	d.p("Picked from this run's figures by the rule in the last column: a lock is supported when every capability the job requires (C1, C2, …: the matrix below) held in every repetition, then ranked; “~” is a tie (see the glossary in the appendix), n the repetitions behind a figure. The best lock of every other family is named with what it failed (✗ C4: capability C4 did not hold).")
	if len(t.rows) > 0 {
		d.add(t)
	}
	if len(workloads.rows) > 0 {
		text := "Your own workloads (a workload file describes one traffic shape; its ranking holds for it, not for others), ranked by this rule: " + WorkloadRanking{}.rule() + ". The table names the leaders; each workload's whole ranking is in the appendix."
		if oneRep {
			text += fmt.Sprintf(" Each ranking rests on one repetition: only figures %g× apart or more are ranked apart.", float64(singleRunFactor))
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
	for _, v := range f.variants(workloadScenario) {
		wr := f.workloadRanking(v)
		if row, ok := workloadRow(v, wr); ok {
			t.rows = append(t.rows, row)
			oneRep = oneRep && (!wr.Ranked() || wr.oneRepetition())
		}
	}
	return t, oneRep
}

// workloadRow is the decision row of workload v: the contenders in first
// place, or why none is; false when fewer than two contenders ran it.
func workloadRow(v string, wr WorkloadRanking) ([]cell, bool) {
	if len(wr.Ranks) < 2 {
		return nil, false
	}
	supports := "not ranked"
	figures := wr.Why
	if wr.Ranked() {
		first := wr.first()
		supports = strings.Join(first, ", ")
		switch {
		case !wr.Ranks[0].PassesAll:
			supports = "none passes every threshold; closest: " + supports
		case len(first) > 1:
			supports += " (tie)"
		}
		figures = wr.Label + ": " + wr.Brief() + "."
		if wr.Why != "" {
			figures = wr.Label + " (" + wr.Why + "): " + wr.Brief() + "."
		}
	}
	return []cell{{text: v}, {text: supports}, {text: figures}}, true
}

// useCaseRow lays out a use case's pick: the locks supported, the
// deciding ranking at the condition it compares (and the locks measured
// only under another, not ranked), the further figures, the best lock of
// every other family with what it failed, the caveat and the rule.
func (f *figures) useCaseRow(p analysis.Pick) []cell {
	var figures []string
	var ranked []entry
	if p.Deciding != nil {
		ranked = entriesOf(p.Deciding.Entries)
		figures = append(figures, rankingLine(*p.Deciding))
	}
	for _, rk := range p.Further {
		figures = append(figures, rankingLine(rk))
	}
	for _, s := range p.Others {
		var why []string
		if len(s.Failed) > 0 {
			var failed []string
			for _, x := range s.Failed {
				failed = append(failed, fmt.Sprintf("%s (%s)", f.a.Ref(x.ID), x.Figure))
			}
			why = append(why, "✗ "+strings.Join(failed, "; ✗ "))
		}
		for _, x := range s.Apart {
			why = append(why, fmt.Sprintf("%s %s", f.a.Ref(x.ID), x.Figure))
		}
		if len(s.Unknown) > 0 && len(s.Failed) == 0 {
			why = append(why, "not measured: "+strings.Join(slicesMap(s.Unknown, func(id string) string { return analysis.ShortLabel(f.a.Label(id)) }), "; "))
		}
		figures = append(figures, fmt.Sprintf("Best of the %s family: %s, %s.", f.a.Family(s.Contender), s.Contender, strings.Join(why, "; ")))
	}
	supportText := strings.Join(p.Supports, ", ")
	if len(p.Supports) == 0 {
		supportText = "none: no lock showed every required capability"
	} else if len(p.Supports) > 1 {
		supportText += " (tie)"
	}
	caveat := p.Caveat
	if n := minN(ranked, p.Supports); n == 1 {
		caveat += " The deciding figure rests on one repetition."
	}
	rule := "ranked by nothing (every qualifying lock is supported)"
	if len(p.Rank) > 0 && f.a.Declared(p.Rank[0]) {
		rule = "ranked by " + f.a.Label(p.Rank[0])
	}
	if len(p.Required) > 0 {
		rule = "requires ✓ on " + strings.Join(slicesMap(p.Required, f.a.Ref), ", ") + "; then " + rule
	}
	return []cell{{text: p.Title}, {text: supportText}, {text: strings.Join(figures, " ")}, {text: caveat}, {text: rule}}
}

// rankingLine prints a ranking: its figure, the condition compared when
// some lock was measured under another, the ranked locks, then those not
// comparable with their reason.
func rankingLine(rk analysis.Ranking) string {
	es := entriesOf(rk.Entries)
	text := rk.Text
	if len(rk.Elsewhere) > 0 {
		text += ", compared in " + conditionText(rk.Condition)
	}
	line := fmt.Sprintf("%s: %s.", text, rankText(topOf(es))+more(es))
	for _, x := range rk.Elsewhere {
		figure := x.Failed
		if figure == "" {
			figure = fmt.Sprintf("%s (n=%d)", results.Format(analysis.Median(x.Values), x.Unit), len(x.Values))
		}
		line += fmt.Sprintf(" Not comparable, not ranked: %s %s, %s.", x.Contender, figure, x.Reason)
	}
	return line
}

// conditionText names a condition for readers: "restart (fault
// server-kill)".
func conditionText(c analysis.Condition) string {
	if c.Fault != "" {
		return fmt.Sprintf("%s (fault %s)", c.Variant, c.Fault)
	}
	return c.Variant
}

// entriesOf are analysis entries as the renderer's.
func entriesOf(es []analysis.Entry) []entry {
	out := make([]entry, len(es))
	for i, e := range es {
		out[i] = fromAnalysis(e)
	}
	return out
}

// minN is the fewest repetitions behind the figures of the supported
// locks.
func minN(es []entry, supports []string) int {
	n := 0
	for _, e := range es {
		if slices.Contains(supports, e.contender) && len(e.vals) > 0 && (n == 0 || len(e.vals) < n) {
			n = len(e.vals)
		}
	}
	return n
}

// decisionShown is how many ranked locks a decision row names; the
// section's own tables rank them all.
const decisionShown = 3

// topOf keeps the first decisionShown entries of a ranking, and the
// entries tied with the last of them up to twice as many; more(es) says
// how many it left out.
func topOf(es []entry) []entry {
	n := min(decisionShown, len(es))
	for n < min(len(es), 2*decisionShown) && es[n].place == es[n-1].place {
		n++
	}
	return es[:n]
}
