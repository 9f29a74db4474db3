package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/output/results"
)

// The workload scenario's section: per workload file, its description
// and warnings, the verdicts of its SLOs per contender, the acquire
// latency from the intended start as a chart, and a ranking.

const workloadScenario = "workload"

// Verdicts of an SLO across a contender's repetitions.
const (
	sloPass     = "pass"
	sloFail     = "fail"
	sloMixed    = "mixed"
	sloNotKnown = "not known"
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

// WorkloadRank is one contender's place for a workload.
type WorkloadRank struct {
	Contender string
	// Place is 1-based; contenders whose acquire p99 lie within each
	// other's spread across repetitions share a place (a tie).
	Place int
	// PassesAll: every threshold passed in every repetition. Failed
	// counts the thresholds that did not (failed, mixed or not known).
	PassesAll bool
	Failed    int
	// AcquireP99 is the acquire p99 from the intended start (us); Has is
	// false when the contender has none.
	AcquireP99 results.Row
	Has        bool
}

// WorkloadRanking ranks the contenders that ran workload (a variant of
// the workload scenario): those that pass every threshold first,
// ordered by acquire p99 from the intended start, then the others by
// the number of thresholds they did not pass and then by acquire p99.
// Contenders whose p99 spreads (min–max across repetitions) overlap
// tie; floors are left out.
func WorkloadRanking(r *results.Results, workload string) []WorkloadRank {
	return newFigures(r).workloadRanking(workload)
}

func (f *figures) workloadRanking(v string) []WorkloadRank {
	var ranks []WorkloadRank
	for _, c := range f.locks(workloadScenario) {
		slos := f.sloResults(c, v)
		if len(slos) == 0 && !f.hasFigures(c, v) {
			continue
		}
		rk := WorkloadRank{Contender: c, PassesAll: true}
		for _, s := range slos {
			if s.Verdict != sloPass {
				rk.PassesAll = false
				rk.Failed++
			}
		}
		rk.AcquireP99, rk.Has = f.row(workloadScenario, c, v, "acquire_p99")
		ranks = append(ranks, rk)
	}
	slices.SortStableFunc(ranks, func(a, b WorkloadRank) int {
		switch {
		case a.PassesAll != b.PassesAll:
			if a.PassesAll {
				return -1
			}
			return 1
		case a.Failed != b.Failed:
			return a.Failed - b.Failed
		case a.Has != b.Has:
			if a.Has {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.AcquireP99.Median, b.AcquireP99.Median)
	})
	for i := range ranks {
		rk := &ranks[i]
		rk.Place = i + 1
		if i == 0 {
			continue
		}
		prev := ranks[i-1]
		if prev.PassesAll == rk.PassesAll && prev.Failed == rk.Failed && prev.Has && rk.Has &&
			rk.AcquireP99.Min <= prev.AcquireP99.Max {
			rk.Place = prev.Place
		}
	}
	return ranks
}

// hasFigures reports whether contender c has any figure in workload v.
func (f *figures) hasFigures(c, v string) bool {
	for _, x := range f.r.Summary {
		if x.Scenario == workloadScenario && x.Contender == c && x.Variant == v {
			return true
		}
	}
	return false
}

// sloResults gathers the verdicts of contender c's repetitions of v per
// threshold, in the file's order.
func (f *figures) sloResults(c, v string) []SLOResult {
	var out []SLOResult
	values := map[string][]float64{}
	for _, raw := range f.raws(workloadScenario, c, v) {
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
			s.Verdict = sloNotKnown
		case s.Passed == s.Repetitions:
			s.Verdict = sloPass
		case s.Passed == 0:
			s.Verdict = sloFail
		default:
			s.Verdict = sloMixed
		}
	}
	return out
}

// sloValue prints a verdict's value in the units its threshold is
// written in: latencies in ms from 1 ms up, shares as percentages.
func sloValue(s SLOResult) string {
	switch s.Unit {
	case "ratio":
		return results.Num(100*s.Value) + "%"
	case "us":
		if s.Value >= 1000 {
			return results.Num(s.Value/1000) + " ms"
		}
	}
	return results.Format(s.Value, s.Unit)
}

// sloCell prints one threshold of one contender.
func sloCell(s SLOResult) cell {
	class := map[string]string{sloPass: "holds", sloFail: "fails", sloMixed: "inconclusive", sloNotKnown: "inconclusive"}[s.Verdict]
	switch s.Verdict {
	case sloNotKnown:
		return cell{text: "not known: " + s.Why, class: class}
	case sloMixed:
		return cell{text: fmt.Sprintf("%s, mixed (%d of %d pass)", sloValue(s), s.Passed, s.Repetitions), class: class}
	}
	return cell{text: sloValue(s) + ", " + s.Verdict, class: class}
}

// workloadSection writes the workload scenario's section.
func (f *figures) workloadSection(d *document) error {
	set := f.r.Parameters.Scenario[workloadScenario]
	for _, v := range f.variants(workloadScenario) {
		d.h3("Workload " + v)
		d.details("Workload "+v+": its description, source and warnings", func(d *document) {
			if desc := set[v+".description"]; desc != "" {
				for _, para := range strings.Split(desc, "\n") {
					if strings.HasPrefix(para, "- ") {
						continue // the SLOs, in the table below
					}
					if para != "SLOs:" {
						d.p(para)
					}
				}
			}
			if src := set[v+".source"]; src != "" {
				d.p("From " + src + "; its full text is in results.json (parameters.scenario.workload." + v + ".file).")
			}
			var warnings []string
			if ws := set[v+".warnings"]; ws != "" {
				warnings = strings.Split(ws, "\n")
			}
			for _, c := range f.scenarioContenders(workloadScenario) {
				for _, raw := range f.raws(workloadScenario, c, v) {
					for _, w := range raw.Warnings {
						if line := c + ": " + w; !slices.Contains(warnings, line) {
							warnings = append(warnings, line)
						}
					}
				}
			}
			if len(warnings) > 0 {
				d.p("Warnings (allowed, but worth saying):")
				d.add(list{items: warnings})
			}
		})
		f.sloTable(d, v)
		svg, err := f.percentileChart("Acquire latency from the intended start ("+v+")", workloadScenario, v, "acquire_from_intended", "acquire from the intended start (ms, log scale)", "ms")
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "workload-" + anchor(v), caption: "Acquire latency of " + v + " from each request's intended start (coordinated omission corrected; requests still waiting at the end at their lower bound), the CDF drawn as a percentile plot, all repetitions merged from the HdrHistograms.", svg: svg})
		}
		if cut := f.censoredText(v); len(cut) > 0 {
			d.details("Workload "+v+": requests still waiting at the stop", func(d *document) {
				d.p("Requests still waiting, or never started, when the run stopped (their latency from the intended start is a lower bound, and so is every percentile that reaches them):")
				d.add(list{items: cut})
			})
		}
		ranks := f.workloadRanking(v)
		if line := rankingText(ranks); line != "" {
			text := "Ranking for " + v + " (every threshold passed first, by acquire p99 from the intended start; then by thresholds not passed): " + line + "."
			if oneRepetition(ranks) {
				text += " Each place rests on one repetition: there is no spread to tell a tie by, so close figures may be noise."
			}
			d.p(text)
		}
	}
	return nil
}

// sloTable writes the SLO verdicts of workload v: a row per contender, a
// column per threshold.
func (f *figures) sloTable(d *document, v string) {
	var thresholds []string
	slos := map[string][]SLOResult{}
	for _, c := range f.locks(workloadScenario) {
		slos[c] = f.sloResults(c, v)
		for _, s := range slos[c] {
			if !slices.Contains(thresholds, s.Threshold) {
				thresholds = append(thresholds, s.Threshold)
			}
		}
	}
	if len(thresholds) == 0 {
		d.p(v + " states no thresholds.")
		return
	}
	var cols []column
	for _, th := range thresholds {
		cols = append(cols, column{head: th, value: func(c string) (string, bool) {
			i := slices.IndexFunc(slos[c], func(s SLOResult) bool { return s.Threshold == th })
			if i < 0 {
				return "", false
			}
			return sloCell(slos[c][i]).text, true
		}})
	}
	t, ok := f.contenderTable(f.locks(workloadScenario), cols)
	if !ok {
		return
	}
	// Colour the verdicts.
	for _, row := range t.rows {
		if isGroup(row) {
			continue
		}
		for j, th := range thresholds {
			if i := slices.IndexFunc(slos[row[0].text], func(s SLOResult) bool { return s.Threshold == th }); i >= 0 && j+1 < len(row) {
				row[j+1].class = sloCell(slos[row[0].text][i]).class
			}
		}
	}
	t.leftAligned = true
	d.p("SLOs of " + v + ", per contender: the measured value and whether the threshold held (pass), did not (fail), held in some repetitions only (mixed), or could not be measured (not known, with the reason).")
	d.add(t)
}

// censoredText says, per contender of workload v, how many measured
// requests were cut off by the stop and from which percentile up the
// latencies are lower bounds.
func (f *figures) censoredText(v string) []string {
	var out []string
	for _, c := range f.locks(workloadScenario) {
		var cut, n int64
		for _, raw := range f.raws(workloadScenario, c, v) {
			cut += raw.Counts["censored"] + raw.Counts["unstarted"]
			n += raw.Counts["requests"]
		}
		if cut == 0 || n == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %d of %d measured requests: percentiles from p%s up are lower bounds", c, cut, n, results.Num(100*(1-float64(cut)/float64(n)))))
	}
	return out
}

// oneRepetition reports whether no ranked contender has more than one
// repetition of its acquire p99.
func oneRepetition(ranks []WorkloadRank) bool {
	for _, rk := range ranks {
		if rk.AcquireP99.N > 1 {
			return false
		}
	}
	return true
}

// rankingText prints a ranking: "1. a (p99 3.1 ms), 2. b and c (tie, ...)".
func rankingText(ranks []WorkloadRank) string {
	var parts []string
	for i := 0; i < len(ranks); {
		j := i
		for j < len(ranks) && ranks[j].Place == ranks[i].Place {
			j++
		}
		var names []string
		for _, rk := range ranks[i:j] {
			s := rk.Contender
			if rk.Has {
				s += " " + sloValue(SLOResult{Value: rk.AcquireP99.Median, Unit: rk.AcquireP99.Unit})
			}
			names = append(names, s)
		}
		part := fmt.Sprintf("%d. %s", ranks[i].Place, strings.Join(names, " and "))
		if j-i > 1 {
			part += " (tie: within each other's spread)"
		}
		if !ranks[i].PassesAll {
			part += fmt.Sprintf(" (%d threshold(s) not passed)", ranks[i].Failed)
		}
		parts = append(parts, part)
		i = j
	}
	return strings.Join(parts, ", ")
}

// workloadAdvice is one line of "which lock when" per workload: its
// ranking.
func (f *figures) workloadAdvice() []string {
	var out []string
	for _, v := range f.variants(workloadScenario) {
		if line := rankingText(f.workloadRanking(v)); strings.Contains(line, ",") {
			out = append(out, fmt.Sprintf("Your workload %s (every SLO passed first, then by acquire p99 from the intended start): %s.", v, line))
		}
	}
	return out
}
