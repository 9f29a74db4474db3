package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// The workload ranking as text: analysis.RankWorkload decides it, these
// lay it out.

// workloadEntries returns the ranked contenders of one threshold group
// as ranking entries with their places, for rankText.
func workloadEntries(w analysis.WorkloadRanking, failed int) []analysis.Entry {
	var es []analysis.Entry
	for _, rk := range w.Ranks {
		if rk.Place > 0 && rk.Failed == failed {
			es = append(es, analysis.Entry{Contender: rk.Contender, Values: rk.Values, Unit: rk.Unit, Place: rk.Place})
		}
	}
	return es
}

// workloadText prints the ranking: per threshold group the contenders as
// rankText reads them ("a 67.8 ms (n=1) ~ b 88.1 ms (n=1), then c 235.5
// ms (n=1, 3.47×)"), then those not ranked and why.
func workloadText(w analysis.WorkloadRanking) string {
	if !w.Ranked() {
		return w.Why
	}
	var parts []string
	var groups []int
	for _, rk := range w.Ranks {
		if rk.Place > 0 && !slices.Contains(groups, rk.Failed) {
			groups = append(groups, rk.Failed)
		}
	}
	for _, g := range groups {
		parts = append(parts, groupHead(g)+": "+rankText(workloadEntries(w, g)))
	}
	if w.NotRanked != "" {
		parts = append(parts, "not ranked: "+w.NotRanked)
	}
	return strings.Join(parts, "; ")
}

// workloadBrief prints the ranking as the decision table shows it, beside the
// leaders' names: the best threshold group's first place (a tie as the
// range of its figures), the next lock with its ratio, and how many more
// were ranked, saying those that passed fewer thresholds;
// rankingParagraph in details.md gives it whole.
func workloadBrief(w analysis.WorkloadRanking) string {
	if !w.Ranked() {
		return w.Why
	}
	es := workloadEntries(w, w.Ranks[0].Failed)
	lead := 1
	for lead < len(es) && es[lead].Place == es[0].Place {
		lead++
	}
	text := groupHead(w.Ranks[0].Failed) + ": "
	shown := min(lead+1, len(es))
	if lead == 1 {
		text += rankText(es[:shown])
	} else {
		lo, hi := spanOf(es[0].Values), spanOf(es[lead-1].Values)
		show := results.DisplayFor(es[0].Unit, lo.median, hi.median)
		text += fmt.Sprintf("%s–%s across the %d tied (n=%d)", show.Num(lo.median), show.Format(hi.median), lead, lo.n)
		if lead < len(es) {
			next := spanOf(es[lead].Values)
			text += fmt.Sprintf(", then %s %s (n=%d, %s)", es[lead].Contender, results.Format(next.median, es[lead].Unit), next.n, results.Ratio(next.median, lo.median))
		}
	}
	ranked, behind := 0, 0
	for _, rk := range w.Ranks {
		if rk.Place > 0 {
			ranked++
			if rk.Failed > w.Ranks[0].Failed {
				behind++
			}
		}
	}
	switch n := ranked - shown; {
	case n > 0 && behind == n:
		text += fmt.Sprintf(", and %d more that passed fewer thresholds", n)
	case n > 0 && behind > 0:
		text += fmt.Sprintf(", and %d more (%d of them passed fewer thresholds)", n, behind)
	case n > 0:
		text += fmt.Sprintf(", and %d more", n)
	}
	return text
}

// groupHead names a threshold group by how many thresholds its locks did
// not pass.
func groupHead(failed int) string {
	switch {
	case failed == 1:
		return "1 threshold not passed"
	case failed > 1:
		return fmt.Sprintf("%d thresholds not passed", failed)
	}
	return "every threshold passed"
}
