package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// The workload scenario's section: per workload file, its description
// and warnings, the verdicts of its SLOs per contender, the acquire
// latency from the intended start as a chart, and a ranking.

const workloadScenario = "workload"

// sloValue prints a verdict's value in the units its threshold is
// written in: latencies in ms from 1 ms up, shares as percentages.
func sloValue(s analysis.SLOResult) string {
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
func sloCell(s analysis.SLOResult) cell {
	class := map[string]string{analysis.SLOPass: "holds", analysis.SLOFail: "fails", analysis.SLOMixed: "inconclusive", analysis.SLONotKnown: "inconclusive"}[s.Verdict]
	switch s.Verdict {
	case analysis.SLONotKnown:
		return cell{text: "not known: " + s.Why, class: class}
	case analysis.SLOMixed:
		return cell{text: fmt.Sprintf("%s, mixed (%d of %d pass)", sloValue(s), s.Passed, s.Repetitions), class: class}
	}
	return cell{text: sloValue(s) + ", " + s.Verdict, class: class}
}

// workloadSection writes the workload scenario's appendix: per workload
// its full description, source, warnings and notes, the SLO table, the
// latency chart and the ranking (report.md has workloadSummary and
// workloadBrief).
func (f *figures) workloadSection(d *document) error {
	set := f.r.Parameters.Scenario[workloadScenario]
	d.p("Each workload's contenders are ranked by: " + analysis.WorkloadRule() + ".")
	for _, v := range f.a.Variants(workloadScenario) {
		d.h3("Workload " + v)
		desc := strings.Split(set[v+".description"], "\n")
		fileWarnings, perContender := f.workloadWarnings(v)
		d.details("Workload "+v+": its description, source and warnings", func(d *document) {
			for _, para := range desc {
				if para != "" && para != "SLOs:" && !strings.HasPrefix(para, "- ") { // the SLOs are the table's columns
					d.p(para)
				}
			}
			if src := set[v+".source"]; src != "" {
				d.p("From " + src + "; its full text is in results.json (parameters.scenario.workload." + v + ".file).")
			}
			var all []string
			all = append(all, fileWarnings...)
			for _, g := range perContender {
				all = append(all, g.who+": "+g.text)
			}
			if len(all) > 0 {
				d.p("Warnings and notes (allowed, but worth saying):")
				d.add(list{items: all})
			}
		})
		f.sloTable(d, v)
		svg, err := f.percentileChart("Acquire latency from the intended start ("+v+")", workloadScenario, v, "acquire_from_intended", "acquire from the intended start", "ms")
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
		if text := rankingParagraph(v, f.a.RankWorkload(workloadScenario, v)); text != "" {
			d.p(text)
		}
	}
	return nil
}

// workloadWarningLines are workload v's warnings one line each, as
// report.md says them (their full texts, and each file's description, are
// in the appendix: report.md's 40 KB).
func (f *figures) workloadWarningLines(v string) []string {
	fileWarnings, perContender := f.workloadWarnings(v)
	var lines []string
	for _, w := range fileWarnings {
		lines = append(lines, v+": "+shortWarning(w))
	}
	for _, g := range perContender {
		if line := v + " (" + g.who + "): " + shortWarning(g.text); strings.Contains(g.text, warningMark) && !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	return lines
}

// warningMark marks a warning (workload.Warning's form) among a record's
// notes.
const warningMark = ": warning: "

// shortWarning is a warning's first sentence without its place in the
// file: "hold: about 67% of the holds (uniform 1s–4s) outlast the lease
// (2s)". The workload package words every warning so that its first
// sentence says it.
func shortWarning(w string) string {
	if _, msg, ok := strings.Cut(w, warningMark); ok {
		w = msg
	}
	if i := strings.Index(w, ". "); i >= 0 {
		w = w[:i]
	}
	return strings.TrimSuffix(w, ".")
}

// sharedNote is one text of the records' warnings and notes with the
// contenders whose records have it: "every contender" when all have it.
type sharedNote struct{ who, text string }

// workloadWarnings returns workload v's warnings from its file and the
// warnings and notes of the contenders' records, each text once with the
// contenders that have it.
func (f *figures) workloadWarnings(v string) ([]string, []sharedNote) {
	var file []string
	if ws := f.r.Parameters.Scenario[workloadScenario][v+".warnings"]; ws != "" {
		file = strings.Split(ws, "\n")
	}
	var g textGroups
	ran := 0
	for _, rec := range f.a.WorkloadRecords(v) {
		if !rec.Ran {
			continue
		}
		ran++
		for _, w := range rec.Warnings {
			if !slices.Contains(file, w) {
				g.add(w, rec.Contender)
			}
		}
	}
	return file, g.notes(ran)
}

// rankingParagraph says a workload's ranking in the workload's section.
func rankingParagraph(v string, wr analysis.WorkloadRanking) string {
	if len(wr.Ranks) == 0 {
		return ""
	}
	if !wr.Ranked() {
		return "Ranking for " + v + ": " + wr.Why + "."
	}
	text := "Ranking for " + v + " by " + wr.Label
	if wr.Why != "" {
		text += " (" + wr.Why + ")"
	}
	text += ": " + workloadText(wr) + "."
	if wr.OneRepetition() {
		text += fmt.Sprintf(" Each figure rests on one repetition: only figures %g× apart or more are ranked apart.", float64(singleRunFactor))
	}
	return text
}

// sloTable writes the SLO verdicts of workload v: a row per contender, a
// column per threshold.
func (f *figures) sloTable(d *document, v string) {
	var thresholds []string
	slos := map[string][]analysis.SLOResult{}
	for _, c := range f.locks(workloadScenario) {
		slos[c] = f.a.SLOResults(workloadScenario, c, v)
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
			i := slices.IndexFunc(slos[c], func(s analysis.SLOResult) bool { return s.Threshold == th })
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
			if i := slices.IndexFunc(slos[row[0].text], func(s analysis.SLOResult) bool { return s.Threshold == th }); i >= 0 && j+1 < len(row) {
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
	var g textGroups
	ran := 0
	for _, rec := range f.a.WorkloadRecords(v) {
		if rec.Requests > 0 {
			ran++
		}
		if rec.Cut > 0 && rec.Requests > 0 {
			g.add(fmt.Sprintf("%d of %d measured requests: percentiles from p%s up are lower bounds", rec.Cut, rec.Requests, results.Num(100*(1-float64(rec.Cut)/float64(rec.Requests)))), rec.Contender)
		}
	}
	var out []string
	for _, n := range g.notes(ran) {
		out = append(out, n.who+": "+n.text)
	}
	return out
}

// textGroups gathers texts, each once in the order first seen, with the
// contenders that have it.
type textGroups struct {
	texts []string
	who   map[string][]string
}

func (g *textGroups) add(text, contender string) {
	if g.who == nil {
		g.who = map[string][]string{}
	}
	if _, ok := g.who[text]; !ok {
		g.texts = append(g.texts, text)
	}
	if !slices.Contains(g.who[text], contender) {
		g.who[text] = append(g.who[text], contender)
	}
}

// notes returns each text with its contenders: "every contender" when
// all of the total have it.
func (g textGroups) notes(total int) []sharedNote {
	var out []sharedNote
	for _, t := range g.texts {
		names := strings.Join(g.who[t], ", ")
		if len(g.who[t]) == total && total > 1 {
			names = "every contender"
		}
		out = append(out, sharedNote{who: names, text: t})
	}
	return out
}

// workloadAdvice is one line of "which lock when" per workload that has
// a ranking of two contenders or more.
func (f *figures) workloadAdvice() []string {
	var out []string
	for _, v := range f.a.Variants(workloadScenario) {
		if wr := f.a.RankWorkload(workloadScenario, v); wr.Ranked() && len(wr.Ranks) > 1 {
			out = append(out, fmt.Sprintf("Your workload %s (every SLO passed first, then by %s): %s.", v, wr.Label, workloadText(wr)))
		}
	}
	return out
}
