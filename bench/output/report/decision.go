package report

import (
	"fmt"
	"slices"
	"strings"
)

// decisionSection opens the report: for each use case (useCases) the
// locks this run supports, the figures that decide it, its caveat and the
// rule that picked it; the workload scenario's ranking where the run has
// one; then the capability matrix.
func (f *figures) decisionSection(d *document) {
	t := table{head: []string{"use case", "this run supports", "deciding figures", "caveat", "rule"}, leftAligned: true, cards: true}
	for _, u := range useCases {
		if row, ok := f.useCaseRow(u); ok {
			t.rows = append(t.rows, row)
		}
	}
	workloads, oneRep := f.workloadRows()
	if len(t.rows) == 0 && len(workloads.rows) == 0 && len(f.capabilityIDs()) == 0 {
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

// requirements expands a use case's required ids (a trailing "*" is a
// prefix) into the run's capability ids; one the run's scenarios do not
// declare stays, as a requirement not measured.
func (f *figures) requirements(u useCase) []string {
	var out []string
	for _, r := range u.requires {
		n := len(out)
		for _, id := range f.capabilityIDs() {
			if r == id || matchVariant(r, id) && f.measuredAnywhere(id) {
				out = append(out, id)
			}
		}
		if len(out) == n {
			out = append(out, r)
		}
	}
	return out
}

// standing is one lock's standing for a use case.
type standing struct {
	contender string
	failed    []string // requirements ✗, as "C4 (figure)" (the matrix's names)
	unknown   []string // requirements not measured
	passed    int      // requirements ✓
}

func (s standing) qualified() bool { return len(s.failed) == 0 && len(s.unknown) == 0 }

// useCaseRow picks the locks for a use case; false when the run measured
// none of its figures.
func (f *figures) useCaseRow(u useCase) ([]cell, bool) {
	reqs := f.requirements(u)
	var locks []string
	for _, c := range f.contenders {
		if !f.isFloor(c) {
			locks = append(locks, c)
		}
	}
	var stands []standing
	measured := false
	for _, c := range locks {
		s := standing{contender: c}
		for _, id := range reqs {
			j := f.capability(c, id)
			switch j.mark {
			case markNo:
				s.failed = append(s.failed, fmt.Sprintf("%s (%s)", f.capabilityRef(id), j.figure))
				measured = true
			case markNone:
				s.unknown = append(s.unknown, shortLabel(f.capabilityLabel(id)))
			default:
				s.passed++
				measured = true
			}
		}
		stands = append(stands, s)
	}
	var first *decl
	if len(u.rank) > 0 {
		if ds := f.decls(u.rank[0]); len(ds) > 0 {
			first = &ds[0]
		}
	}
	var qualified []entry
	for _, s := range stands {
		if !s.qualified() || first == nil {
			continue
		}
		if j := f.judgeFigure(s.contender, u.rank[0]); len(j.entry.vals) > 0 || j.entry.failed != "" {
			qualified = append(qualified, j.entry)
			measured = true
		}
	}
	if first == nil {
		for _, s := range stands {
			if s.qualified() {
				qualified = append(qualified, entry{contender: s.contender})
			}
		}
	}
	if !measured {
		return nil, false
	}
	var ranked []entry
	if first != nil {
		ranked = rank(qualified, f.higherIsBetter(*first))
	} else {
		ranked = qualified
	}

	var supports []string
	for _, e := range ranked {
		if e.place == ranked[0].place && e.failed == "" && !e.noise {
			supports = append(supports, e.contender)
		}
	}
	var figures []string
	if first != nil && len(ranked) > 0 {
		figures = append(figures, fmt.Sprintf("%s: %s.", first.Text, rankText(topOf(ranked))+more(ranked)))
		for _, id := range u.rank[1:] {
			if line := f.figureLine(id, supports); line != "" {
				figures = append(figures, line)
			}
		}
	}
	figures = append(figures, f.otherFamilies(stands)...)
	supportText := strings.Join(supports, ", ")
	if len(supports) == 0 {
		supportText = "none: no lock showed every required capability"
	} else if len(supports) > 1 {
		supportText += " (tie)"
	}
	caveat := u.caveat
	if n := minN(ranked, supports); n == 1 {
		caveat += " The deciding figure rests on one repetition."
	}
	rule := "ranked by " + f.figureTexts(u.rank[:min(1, len(u.rank))])
	if len(reqs) > 0 {
		rule = "requires ✓ on " + strings.Join(slicesMap(reqs, f.capabilityRef), ", ") + "; then " + rule
	}
	return []cell{{text: u.title}, {text: supportText}, {text: strings.Join(figures, " ")}, {text: caveat}, {text: rule}}, true
}

// higherIsBetter reads a figure's declared direction.
func (f *figures) higherIsBetter(d decl) bool {
	s, _ := f.r.Scenario(d.scenario)
	m, _ := s.Metric(d.Metric)
	return m.Better == "higher"
}

// figureLine prints one further figure of a use case for the supported
// locks, ranked.
func (f *figures) figureLine(id string, contenders []string) string {
	ds := f.decls(id)
	if len(ds) == 0 {
		return ""
	}
	var es []entry
	for _, c := range contenders {
		if j := f.judgeFigure(c, id); len(j.entry.vals) > 0 || j.entry.failed != "" {
			es = append(es, j.entry)
		}
	}
	if len(es) == 0 {
		return ""
	}
	ranked := rank(es, f.higherIsBetter(ds[0]))
	return fmt.Sprintf("%s: %s.", ds[0].Text, rankText(topOf(ranked))+more(ranked))
}

// judgeFigure judges a ranking figure for one contender at the first of
// its declarations where the contender has the figure or a failure, so
// that each deployment is ranked by its own variant (a standby pair by
// its primary's loss, a single server by its restart).
func (f *figures) judgeFigure(c, id string) judged {
	var j judged
	for _, d := range f.decls(id) {
		if j = f.judgeDecl(c, d); len(j.entry.vals) > 0 || j.entry.failed != "" {
			return j
		}
	}
	return j
}

// otherFamilies names, for every family without a lock that qualifies,
// its lock closest to qualifying (see better) and what it failed or did
// not measure.
func (f *figures) otherFamilies(stands []standing) []string {
	var families []string
	for _, s := range stands {
		if s.qualified() {
			families = append(families, f.family(s.contender))
		}
	}
	best := map[string]standing{}
	var order []string
	for _, s := range stands {
		fam := f.family(s.contender)
		if slices.Contains(families, fam) || s.qualified() {
			continue
		}
		b, seen := best[fam]
		if !seen {
			order = append(order, fam)
		}
		if !seen || better(s, b) {
			best[fam] = s
		}
	}
	var out []string
	for _, fam := range order {
		s := best[fam]
		switch {
		case len(s.failed) > 0:
			out = append(out, fmt.Sprintf("Best of the %s family: %s, ✗ %s.", fam, s.contender, strings.Join(s.failed, "; ✗ ")))
		case len(s.unknown) > 0:
			out = append(out, fmt.Sprintf("Best of the %s family: %s, not measured: %s.", fam, s.contender, strings.Join(s.unknown, "; ")))
		}
	}
	return out
}

// figureTexts names figures by their declared text.
func (f *figures) figureTexts(ids []string) string {
	var out []string
	for _, id := range ids {
		if ds := f.decls(id); len(ds) > 0 {
			out = append(out, ds[0].Text)
		}
	}
	if len(out) == 0 {
		return "nothing (every qualifying lock is supported)"
	}
	return strings.Join(out, ", then ")
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

// better reports whether a lock is closer to qualifying than b, as
// evidence: more requirements measured first (a measured ✗ says more
// than "not measured"), then more requirements shown, then fewer failed.
func better(a, b standing) bool {
	am, bm := a.passed+len(a.failed), b.passed+len(b.failed)
	switch {
	case am != bm:
		return am > bm
	case a.passed != b.passed:
		return a.passed > b.passed
	}
	return len(a.failed) < len(b.failed)
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

// shortLabel is a capability's text without its parenthesised
// definition, which the capability matrix's legend gives once.
func shortLabel(text string) string {
	if i := strings.Index(text, " ("); i > 0 {
		return text[:i]
	}
	return text
}
