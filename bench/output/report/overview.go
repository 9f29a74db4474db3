package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

func (f *figures) intro(d *document) {
	r := f.r
	if r.Partial {
		d.add(paragraph{text: "Partial run: " + r.PartialReason + ". Figures cover only the steps that finished; missing figures are shown as –.", strong: true})
	}
}

// runFacts says where and how the run measured, after the decision (on a
// phone the first screen is the decision, not the machine).
func (f *figures) runFacts(d *document) {
	r := f.r
	e := r.Environment
	d.p(fmt.Sprintf("Measured on %s (%d cores, GOMAXPROCS %d, %s/%s), backend %s, network path: %s. Run started %s, finished %s.",
		orUnknown(e.CPUModel), e.Cores, e.GOMAXPROCS, e.OS, e.Arch, e.Backend, orUnknown(e.NetworkPath),
		r.StartedAt.UTC().Format("2006-01-02 15:04:05Z"), finished(r)))
	d.p(fmt.Sprintf("Every figure is the median across its repetitions (n; %s), with the min–max across repetitions in parentheses when they differ. "+
		"Lower is better for latencies, handover times, waits, CPU and coordinator load; higher is better for throughput and the Jain index. "+
		"All of this report is generated from results.json (monolock-bench report DIR/results.json re-renders it); nothing in it is written by hand.",
		f.repetitionsText()))
}

// contenderList names the contenders, grouped by family, with what each
// is (describe): a later member of a family says only what differs from
// the first.
func (f *figures) contenderList(d *document) {
	t, ok := f.contenderTable(f.contenders, []column{{head: "what it is", value: func(c string) (string, bool) {
		parts := f.describe(c)
		first := f.contenders[slices.IndexFunc(f.contenders, func(o string) bool { return f.family(o) == f.family(c) && f.isFloor(o) == f.isFloor(c) })]
		if first != c && !f.isFloor(c) {
			base := f.describe(first)
			if own := slices.DeleteFunc(slices.Clone(parts), func(p string) bool { return slices.Contains(base, p) }); len(own) < len(parts) {
				parts = append(own, "otherwise as "+first)
			}
		}
		return strings.Join(parts, "; "), len(parts) > 0
	}}})
	if !ok {
		return
	}
	t.leftAligned = true
	d.h2("Contenders")
	// The table is the appendix's (report.md's 40 KB): here the names by
	// family.
	var families []string
	members := map[string][]string{}
	for _, c := range f.contenders {
		fam := f.family(c)
		if f.isFloor(c) {
			fam = "floors"
		}
		if _, ok := members[fam]; !ok {
			families = append(families, fam)
		}
		members[fam] = append(members[fam], c)
	}
	var groups []string
	for _, fam := range families {
		groups = append(groups, fam+": "+strings.Join(members[fam], ", "))
	}
	d.p(strings.Join(groups, "; ") + ". What each one is, from its recorded settings:")
	d.details("Contenders: what each one is", func(d *document) { d.add(t) })
}

// describe says in a line of parts what a contender is, from what the run
// recorded of it: its label where it says more than its name, then its
// settings: what makes it a variant of another (variant, deployment), how
// it claims a lock, its fencing token, how many servers it needs, how it
// waits and its server's own settings.
func (f *figures) describe(c string) []string {
	set := f.r.Parameters.Contender[c]
	var parts []string
	if l := f.info[c].Label; l != "" && l != c {
		parts = append(parts, l)
	}
	add := func(prefix string, keys ...string) {
		for _, k := range keys {
			if v := clipSetting(set[k]); v != "" {
				if !slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(p, v) }) {
					parts = append(parts, prefix+v)
				}
				return
			}
		}
	}
	add("", "variant", "deployment")
	add("", "claim", "acquire", "client")
	if v := set["token"]; v != "" && !strings.HasPrefix(v, "none") {
		parts = append(parts, "fencing token: "+clipSetting(v))
	}
	if set["locks"] != "" {
		parts = append(parts, "takes no lock (a baseline)")
	}
	if m, q := set["masters"], set["quorum"]; m != "" && q != "" {
		parts = append(parts, m+" masters, quorum "+q)
	}
	add("", "endpoints")
	add("waits: ", "wait")
	if v := set["server_settings"]; v != "" && !strings.HasPrefix(v, "default") {
		parts = append(parts, "server: "+clipSetting(v))
	}
	if f.info[c].ContendedOnly {
		parts = append(parts, "runs only where workers share keys")
	}
	return parts
}

// clipSetting keeps the first clause of a recorded setting: up to its
// first colon or semicolon, and a long one up to its first parenthesis.
func clipSetting(v string) string {
	for _, sep := range []string{": ", "; "} {
		v, _, _ = strings.Cut(v, sep)
	}
	if i := strings.Index(v, " ("); len(v) > 70 && i >= 30 {
		v = v[:i]
	}
	return v
}

func finished(r *results.Results) string {
	if r.FinishedAt.IsZero() {
		return "not recorded"
	}
	return r.FinishedAt.UTC().Format("2006-01-02 15:04:05Z")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// glanceGroup is one table of the at-a-glance section: the figures a user
// decides on, with the variants this run has.
type glanceGroup struct {
	title string
	cols  []column
}

func (f *figures) glanceGroups() []glanceGroup {
	// unit names what a rate counts ("locks/s"); times and sizes take
	// the unit that suits the column's figures.
	col := func(head string, fc analysis.FigureColumn, unit string) column {
		c := f.figureColumn(head, fc)
		if strings.HasSuffix(unit, "/s") {
			if h, ok := strings.CutSuffix(c.head, " (/s)"); ok {
				c.head = h + " (" + unit + ")"
			}
		}
		return c
	}
	one := f.a.OneWorker()
	speed := []column{
		col("acquire p50, 1 worker", one.AcquireP50, "us"),
		col("acquire p99, 1 worker", one.AcquireP99, "us"),
		col("acquire + release p50, 1 worker", one.CycleP50, "us"),
	}
	tm := results.ThroughputMetrics
	var cpu []column
	if v, w := f.a.MostWorkers(); v != "" {
		speed = append(speed,
			col(fmt.Sprintf("short locks, %d workers, distinct keys", w), f.a.Column("throughput", v, tm.CyclesPerSec.Name), "locks/s"),
			col(fmt.Sprintf("cycle p99, %d workers", w), f.a.Column("throughput", v, tm.CycleP99.Name), "us"))
		cpu = append(cpu,
			col(fmt.Sprintf("coordinator CPU per 1,000 locks, %d workers", w), f.a.Column("throughput", v, tm.ServerCPUMsPer1k.Name), "ms"),
			col(fmt.Sprintf("client CPU per 1,000 locks, %d workers", w), f.a.Column("throughput", v, tm.ClientCPUMsPer1k.Name), "ms"))
	}
	if cv := f.a.Contended(); len(cv) > 0 {
		speed = append(speed, col(fmt.Sprintf("short locks, %d workers, shared keys", cv[0].Workers), f.a.Column("throughput", cv[0].Variant, tm.CyclesPerSec.Name), "locks/s"))
	}
	ho := f.a.Handover()
	groups := []glanceGroup{
		{"Speed", speed},
		{"Handover (the waiter's grant after the holder stops)", []column{
			col("after release, p50", ho.AfterRelease, "ms"),
			col("after crash, p50", ho.AfterCrash, "ms"),
			col("after crash, max", ho.SlowestAfterCrash, "ms"),
			col("after freeze, p50", ho.AfterFreeze, "ms"),
		}},
	}
	if v := f.a.FirstLockVariant("fairness"); v != "" {
		fm := results.FairnessMetrics
		groups = append(groups, glanceGroup{"Contention (" + v + ")", []column{
			col("Jain index (1 = equal shares)", f.a.Column("fairness", v, fm.JainIndex.Name), ""),
			col("FIFO inversions per 1,000 grants", f.a.Column("fairness", v, fm.FIFOInversionsPer1k.Name), ""),
			col("wait p99", f.a.Column("fairness", v, fm.WaitP99.Name), "ms"),
			col("coordinator load", f.a.Column("fairness", v, fm.ServerOpsPerSec.Name), "commands/s"),
		}})
	}
	return append(groups, glanceGroup{"CPU", cpu})
}

func (f *figures) atAGlance(d *document) {
	d.h2("At a glance")
	shown := false
	for _, g := range f.glanceGroups() {
		t, ok := f.contenderTable(f.contenders, g.cols)
		if !ok {
			continue
		}
		d.p(g.title + ":")
		d.add(t)
		shown = true
	}
	if !shown {
		d.p("No figures: none of the decision figures was measured in this run.")
		return
	}
	d.p("– means not measured in this run (floors take part only where they frame the physics, in latency and throughput). A floor is a baseline contender with no lock logic: the best any lock of its kind can do on this machine and path.")
}

func (f *figures) claimsSection(d *document, claims []analysis.Claim) {
	d.h2("Claims checked")
	if len(claims) == 0 {
		d.p("This run records no claims to check.")
		return
	}
	d.p("Each claim of the comparison pages, checked as a testable statement against this run: it holds or fails only when every repetition agrees, else it is inconclusive; a statement about another system that the run contradicts is " + contradicted + ", with the figure.")
	var tallies []string
	for _, k := range claimKinds {
		if of := claimsOfKind(claims, k.kind); len(of) > 0 {
			tallies = append(tallies, k.heading+": "+tallyText(of, k.kind)+".")
		}
	}
	d.add(list{items: tallies})
	t := table{head: []string{"kind", "about", "claim", "verdict"}, leftAligned: true, cards: true}
	var shown []analysis.Claim
	for _, k := range claimKinds {
		of := claimsOfKind(claims, k.kind)
		for _, c := range of {
			if !c.Failed() && !c.Contradicted() || slices.ContainsFunc(shown, func(s analysis.Claim) bool { return s.ID == c.ID && s.Subject == c.Subject }) {
				continue
			}
			// the same words about another contender of the run (another
			// setting of the same system) stand beside it, whatever their
			// verdict: which figure a user gets with which setting
			for _, s := range of {
				sibling := s.Claim == c.Claim && s.Subject != c.Subject && !slices.ContainsFunc(shown, func(x analysis.Claim) bool { return x.Claim == s.Claim && x.Subject == s.Subject })
				if s.ID == c.ID && s.Subject == c.Subject || sibling {
					shown = append(shown, s)
					t.rows = append(t.rows, []cell{{text: k.short}, {text: s.Subject}, {text: s.Claim}, shownVerdict(s)})
				}
			}
		}
	}
	if len(t.rows) > 0 {
		d.p("The claims that fail or that this run contradicts, with the same claim about the other contenders it was made for; the inconclusive ones, and why, are in the appendix:")
		d.add(t)
	}
	// Which setting gave which figure is read beside the tables: the
	// verdicts above already say which setting holds (report.md's 40 KB).
	d.details("Claims checked: every statement, figure and threshold", func(d *document) {
		if text := f.settingsCompared(shown); text != "" {
			d.p(text)
		}
		f.claimTables(d, claims)
	})
}

// settingsCompared says, for each claim made in the same words about
// contenders that differ in their settings (Redlock with its default
// timeouts and with short ones) and whose verdicts differ, what each
// measured with which settings.
func (f *figures) settingsCompared(shown []analysis.Claim) string {
	var parts, done []string
	for _, c := range shown {
		if slices.Contains(done, c.Claim) {
			continue
		}
		done = append(done, c.Claim)
		var same []analysis.Claim
		for _, s := range shown {
			if s.Claim == c.Claim && !slices.ContainsFunc(same, func(x analysis.Claim) bool { return x.Subject == s.Subject }) {
				same = append(same, s)
			}
		}
		// only decided verdicts that differ: a figure with each setting
		if len(same) < 2 || slices.ContainsFunc(same, func(s analysis.Claim) bool { return !s.Decided() }) ||
			!slices.ContainsFunc(same, func(s analysis.Claim) bool { return s.Verdict != same[0].Verdict }) {
			continue
		}
		var each []string
		for _, s := range same {
			apart := f.settingsApart(s.Subject, same)
			if len(apart) == 0 || len(apart) > maxSettingsApart {
				break // not a setting of one system: other systems
			}
			evidence, _, _ := strings.Cut(s.Evidence, "; ")
			each = append(each, fmt.Sprintf("%s (%s): %s — %s", s.Subject, strings.Join(apart, ", "), evidence, shownVerdict(s).text))
		}
		if len(each) < len(same) {
			continue
		}
		parts = append(parts, fmt.Sprintf("“%s”: %s.", strings.TrimSuffix(c.Claim, "."), strings.Join(each, "; ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Which figure a user gets with which setting: " + strings.Join(parts, " ")
}

// maxSettingsApart is the most settings in which two contenders may
// differ to count as one system with another setting (Redlock with short
// timeouts) rather than another system.
const maxSettingsApart = 4

// settingsApart lists the settings of contender c whose values differ
// from those of another contender of the claims: what a user chooses.
func (f *figures) settingsApart(c string, claims []analysis.Claim) []string {
	set := f.r.Parameters.Contender[c]
	keys := slices.Sorted(maps.Keys(set))
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k, "cap_") || k == "variant" {
			continue
		}
		for _, o := range claims {
			if other := f.r.Parameters.Contender[o.Subject]; o.Subject != c && other[k] != set[k] {
				out = append(out, k+" "+clipSetting(set[k]))
				break
			}
		}
	}
	return out
}

// claimsOfKind returns the claims of one kind, in the rules' order.
func claimsOfKind(claims []analysis.Claim, kind string) []analysis.Claim {
	var out []analysis.Claim
	for _, c := range claims {
		if c.Whose() == kind {
			out = append(out, c)
		}
	}
	return out
}

// tallyText counts the verdicts of claims of one kind as the report
// shows them.
func tallyText(claims []analysis.Claim, kind string) string {
	holds, fails, inc := analysis.TallyClaims(claims)
	failed := "fail"
	if kind == results.ClaimOther {
		failed = contradicted
	}
	return fmt.Sprintf("%d of %d hold, %d %s, %d inconclusive", holds, len(claims), fails, failed, inc)
}
