package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// Verdicts of an SLO across a contender's repetitions.
const (
	SLOPass     = "pass"
	SLOFail     = "fail"
	SLOMixed    = "mixed"
	SLONotKnown = "not known"
)

// SLOResult is one threshold of a workload checked for one contender
// across the run's repetitions.
type SLOResult struct {
	Threshold string
	// Verdict is "pass" (every repetition held it), "fail" (none did),
	// "mixed" or "not known" (a repetition could not measure it; Why
	// says why).
	Verdict string
	// Value is the median across the repetitions that measured it, in
	// Unit ("ratio" for a share).
	Value float64
	Unit  string
	// Passed and Known count the repetitions.
	Passed, Known, Repetitions int
	Why                        string
}

// SLOResults gathers the verdicts of contender c's repetitions of
// workload v (a variant of the workload scenario) per threshold, in the
// file's order.
func (run *Run) SLOResults(scenario, c, v string) []SLOResult {
	var out []SLOResult
	values := map[string][]float64{}
	for _, raw := range run.raws[rawKey{scenario, c, v}] {
		if raw.Skipped != "" {
			continue
		}
		for _, vd := range raw.Verdicts {
			i := slices.IndexFunc(out, func(s SLOResult) bool { return s.Threshold == vd.Threshold })
			if i < 0 {
				out = append(out, SLOResult{Threshold: vd.Threshold, Unit: vd.Unit})
				i = len(out) - 1
			}
			s := &out[i]
			s.Repetitions++
			if !vd.Known {
				if s.Why == "" {
					s.Why = vd.Why
				}
				continue
			}
			s.Known++
			values[vd.Threshold] = append(values[vd.Threshold], vd.Value)
			if vd.Pass {
				s.Passed++
			}
		}
	}
	for i := range out {
		s := &out[i]
		if vs := values[s.Threshold]; len(vs) > 0 {
			slices.Sort(vs)
			s.Value = vs[len(vs)/2]
			if len(vs)%2 == 0 {
				s.Value = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
			}
		}
		switch {
		case s.Known < s.Repetitions:
			s.Verdict = SLONotKnown
		case s.Passed == s.Repetitions:
			s.Verdict = SLOPass
		case s.Passed == 0:
			s.Verdict = SLOFail
		default:
			s.Verdict = SLOMixed
		}
	}
	return out
}

// The ranking of the contenders for one workload. It rests on acquire
// latency from the intended start, and only where the samples measure
// it: a percentile is a figure when enough measured requests lie above
// it and none of them is a lower bound (a request still waiting at the
// stop). Places come from the one noise-aware rule (Rank).

// rankFigure is an acquire percentile a workload ranking may rest on: the
// percentile below which all but one in above of the requests lie.
type rankFigure struct {
	metric results.MetricSpec
	above  int64
}

// rankFigures are tried in order: the tail first, the median when the
// tail is not measured for every contender that has a median.
var rankFigures = []rankFigure{
	{results.WorkloadMetrics.AcquireP99, 100},
	{results.WorkloadMetrics.AcquireP50, 2},
}

// minRankRequests is the fewest measured requests of a repetition that a
// ranking figure rests on, whatever its percentile: with 20 the median's
// distribution-free 95% confidence interval lies within the sample's
// p30–p75 (its 6th to 15th value).
const minRankRequests = 20

// WorkloadRanking is the ranking of the contenders that ran one workload.
type WorkloadRanking struct {
	// Metric is the figure the places rest on, Label its words; both
	// empty when no contender has one (Why says why).
	Metric, Label string
	// Why says why the ranking falls back to the median, or why there is
	// none.
	Why string
	// Ranks are the ranked contenders, best first, then the ones that
	// are not ranked (Place 0).
	Ranks []WorkloadRank
	// NotRanked says why the contenders of Place 0 are not ranked.
	NotRanked string
}

// WorkloadRank is one contender's standing for a workload.
type WorkloadRank struct {
	Contender string
	// Place is 1-based and shared by contenders whose figures cannot be
	// told apart (rank); 0 when not ranked.
	Place int
	// PassesAll: every threshold passed in every repetition. Failed
	// counts the thresholds that did not (failed, mixed or not known).
	PassesAll bool
	Failed    int
	// Values are the ranking figure, one per repetition, in Unit.
	Values []float64
	Unit   string
	// Unranked says why a contender has no figure to rank by.
	Unranked string
}

// Ranked reports whether the ranking has any place.
func (w WorkloadRanking) Ranked() bool { return len(w.Ranks) > 0 && w.Ranks[0].Place > 0 }

// sample is what one repetition's acquire percentiles rest on: its
// measured requests and those among them cut off by the stop (censored
// or never started), whose latencies are lower bounds.
type sample struct{ requests, cut int64 }

func sampleOf(raw results.Raw) sample {
	return sample{raw.Counts["requests"], raw.Counts["censored"] + raw.Counts["unstarted"]}
}

// gap says why a contender has no figure: a reason that contenders
// share, and its detail for this one. The zero gap: measured.
type gap struct{ reason, detail string }

func (g gap) String() string {
	if g.detail == "" {
		return g.reason
	}
	return g.detail + ": " + g.reason
}

// measures says why s does not measure fig (the zero gap when it does).
func (s sample) measures(fig rankFigure) gap {
	need := max(minRankRequests, fig.above)
	few := fmt.Sprintf("fewer than the %d measured requests a %s needs", need, shortFigure(fig))
	switch {
	case s.requests == 0:
		return gap{reason: "no measured request"}
	case s.requests == 1:
		return gap{few, "1 request"}
	case s.requests < need:
		return gap{few, fmt.Sprintf("%d requests", s.requests)}
	case s.cut*fig.above >= s.requests:
		return gap{shortFigure(fig) + " a lower bound", fmt.Sprintf("%d of %d requests still waiting at the stop", s.cut, s.requests)}
	}
	return gap{}
}

// gaps gathers why contenders have no figure, by reason in the order
// first seen.
type gaps struct {
	reasons []string
	who     map[string][]string // per reason, "contender (detail)"
	details map[string][]string
}

func (g *gaps) add(x gap, contender string) {
	if g.who == nil {
		g.who, g.details = map[string][]string{}, map[string][]string{}
	}
	if _, ok := g.who[x.reason]; !ok {
		g.reasons = append(g.reasons, x.reason)
	}
	name := contender
	if x.detail != "" {
		name += " (" + x.detail + ")"
	}
	g.who[x.reason] = append(g.who[x.reason], name)
	if !slices.Contains(g.details[x.reason], x.detail) {
		g.details[x.reason] = append(g.details[x.reason], x.detail)
	}
}

// text prints the gaps: "a (17 requests), b (16 requests): fewer than …;
// c: no measured request", or "every contender (17 requests): …" when
// all of total share a reason and its detail.
func (g gaps) text(total int) string {
	var parts []string
	for _, r := range g.reasons {
		names := strings.Join(g.who[r], ", ")
		if len(g.who[r]) == total && total > 1 && len(g.details[r]) == 1 {
			names = "every contender"
			if d := g.details[r][0]; d != "" {
				names += " (" + d + ")"
			}
		}
		parts = append(parts, names+": "+r)
	}
	return strings.Join(parts, "; ")
}

func shortFigure(fig rankFigure) string { return strings.TrimPrefix(fig.metric.Name, "acquire_") }

// workloadStanding is a contender's thresholds and samples for a
// workload.
type workloadStanding struct {
	rank    WorkloadRank
	samples []sample
}

// RankWorkload ranks the contenders that ran workload v (a variant of
// the workload scenario): those that pass every threshold first, then by
// the number of thresholds they did not pass; within each, by acquire
// p99 from the intended start (the p50 when the p99 is not measured),
// tied within the noise (Rank). A contender whose median is not measured
// either is not ranked, and neither is a workload where no contender has
// one.
func (run *Run) RankWorkload(scenario, v string) WorkloadRanking {
	var all []workloadStanding
	for _, c := range run.locksIn(scenario) {
		slos := run.SLOResults(scenario, c, v)
		var samples []sample
		for _, raw := range run.raws[rawKey{scenario, c, v}] {
			if raw.Skipped == "" {
				samples = append(samples, sampleOf(raw))
			}
		}
		if len(samples) == 0 {
			continue
		}
		s := workloadStanding{rank: WorkloadRank{Contender: c, PassesAll: true}, samples: samples}
		for _, x := range slos {
			if x.Verdict != SLOPass {
				s.rank.PassesAll = false
				s.rank.Failed++
			}
		}
		all = append(all, s)
	}
	if len(all) == 0 {
		return WorkloadRanking{}
	}
	// why[i][k] is why contender i has no figure k (zero when it has).
	why := make([][]gap, len(all))
	for i, s := range all {
		for _, fig := range rankFigures {
			var w gap
			vals, _ := run.values(scenario, s.rank.Contender, v, fig.metric.Name)
			for _, smp := range s.samples {
				if w = smp.measures(fig); w != (gap{}) {
					break
				}
			}
			if w == (gap{}) && len(vals) < len(s.samples) {
				w = gap{reason: "no measured request was granted"}
			}
			why[i] = append(why[i], w)
		}
	}
	// The tail when every contender with a median has it, else the median.
	median := len(rankFigures) - 1
	pick := 0
	var fallback gaps
	for i, s := range all {
		if why[i][median] == (gap{}) && why[i][0] != (gap{}) {
			pick = median
			fallback.add(why[i][0], s.rank.Contender)
		}
	}
	fig := rankFigures[pick]
	out := WorkloadRanking{Metric: fig.metric.Name, Label: fig.metric.Label}
	if pick > 0 {
		out.Why = fmt.Sprintf("the %s is not measured for %s", shortFigure(rankFigures[0]), fallback.text(len(all)))
	}
	var ranked, unranked []WorkloadRank
	var missing gaps
	for i, s := range all {
		rk := s.rank
		if why[i][pick] != (gap{}) {
			g := why[i][median] // a p99 implies a median
			rk.Unranked = g.String()
			missing.add(g, rk.Contender)
			unranked = append(unranked, rk)
			continue
		}
		vals, unit := run.values(scenario, rk.Contender, v, fig.metric.Name)
		rk.Values, rk.Unit = vals, unit
		ranked = append(ranked, rk)
	}
	if len(ranked) == 0 {
		out.Metric, out.Label = "", ""
		out.Why = "not ranked: " + missing.text(len(all))
		out.Ranks = unranked
		return out
	}
	// Groups by thresholds not passed, fewest first; places continue
	// from group to group.
	slices.SortStableFunc(ranked, func(a, b WorkloadRank) int { return a.Failed - b.Failed })
	for i := 0; i < len(ranked); {
		j := i
		for j < len(ranked) && ranked[j].Failed == ranked[i].Failed {
			j++
		}
		var es []Entry
		for _, rk := range ranked[i:j] {
			es = append(es, Entry{Contender: rk.Contender, Values: rk.Values, Unit: rk.Unit})
		}
		for _, e := range Rank(es, false) {
			k := slices.IndexFunc(ranked[i:j], func(rk WorkloadRank) bool { return rk.Contender == e.Contender })
			rk := ranked[i+k]
			rk.Place = i + e.Place
			out.Ranks = append(out.Ranks, rk)
		}
		i = j
	}
	out.Ranks = append(out.Ranks, unranked...)
	out.NotRanked = missing.text(len(all))
	return out
}

// locksIn lists the locks (no floors) with figures in a scenario, in
// the order of Locks.
func (run *Run) locksIn(scenario string) []string {
	var out []string
	for _, c := range run.locks {
		if slices.ContainsFunc(run.r.Summary, func(x results.Row) bool { return x.Scenario == scenario && x.Contender == c }) {
			out = append(out, c)
		}
	}
	return out
}

// WorkloadRule is the workload ranking's rule in words.
func WorkloadRule() string {
	return fmt.Sprintf("every threshold passed in every repetition first, then fewer not passed; within each, by acquire p99 from the intended start, or its p50 where a p99 is not measured (fewer than 100 requests, or one above it still waiting at the stop); none below %d requests; ~ inside the noise", minRankRequests)
}

// First returns the contenders in first place.
func (w WorkloadRanking) First() []string {
	var out []string
	for _, rk := range w.Ranks {
		if rk.Place == 1 {
			out = append(out, rk.Contender)
		}
	}
	return out
}

// OneRepetition reports whether no ranked contender has more than one
// repetition of its figure.
func (w WorkloadRanking) OneRepetition() bool {
	for _, rk := range w.Ranks {
		if len(rk.Values) > 1 {
			return false
		}
	}
	return true
}
