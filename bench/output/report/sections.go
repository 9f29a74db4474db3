package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/output/results"
)

// maxFigureColumns keeps every table of figures within a 1280-px page:
// more metrics than this go into a second table.
const maxFigureColumns = 6

func (f *figures) intro(d *document) {
	r := f.r
	if r.Partial {
		d.add(paragraph{text: "Partial run: " + r.PartialReason + ". Figures cover only the steps that finished; missing figures are shown as –.", strong: true})
	}
	e := r.Environment
	d.p(fmt.Sprintf("Measured on %s (%d cores, GOMAXPROCS %d, %s/%s), backend %s, network path: %s. Run started %s, finished %s.",
		orUnknown(e.CPUModel), e.Cores, e.GOMAXPROCS, e.OS, e.Arch, e.Backend, orUnknown(e.NetworkPath),
		r.StartedAt.UTC().Format("2006-01-02 15:04:05Z"), finished(r)))
	d.p(fmt.Sprintf("Every figure is the median across its repetitions (n; %s), with the min–max across repetitions in parentheses when they differ. "+
		"Lower is better for latencies, handover times, waits, CPU and coordinator load; higher is better for throughput and the Jain index. "+
		"All of this report is generated from results.json (monolock-bench report DIR/results.json re-renders it); nothing in it is written by hand.",
		f.repetitionsText()))
	f.contenderList(d)
}

// contenderList names the contenders, grouped by family, with what each
// is.
func (f *figures) contenderList(d *document) {
	t, ok := f.contenderTable(f.contenders, []column{{head: "what it is", value: func(c string) (string, bool) {
		i := f.info[c]
		text := i.Label
		if i.ContendedOnly {
			text = strings.TrimPrefix(text+"; runs only where workers share keys", "; ")
		}
		return text, text != ""
	}}})
	if !ok {
		return
	}
	t.leftAligned = true
	d.p("Contenders, by family:")
	d.add(t)
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

// column is one figure column of a table with a row per contender.
type column struct {
	head  string
	value func(contender string) (string, bool)
}

// figureColumn shows one summary figure as "median (min–max)".
func (f *figures) figureColumn(head, scenario, variant, metric string) column {
	return column{head: head, value: func(c string) (string, bool) {
		x, ok := f.row(scenario, c, variant, metric)
		if why := f.failedFigure(scenario, c, variant, metric, ok); why != "" {
			return why, true
		}
		if !ok {
			return "", false
		}
		return spread(x), true
	}}
}

// contenderTable builds a table with one row per contender that has a
// value in some column, in display order (grouped by family, floors
// last, with a heading row per group when there is more than one), and
// the columns that have a value for some contender; false when nothing
// is left.
func (f *figures) contenderTable(contenders []string, cols []column) (table, bool) {
	var shown []column
	for _, col := range cols {
		for _, c := range contenders {
			if _, ok := col.value(c); ok {
				shown = append(shown, col)
				break
			}
		}
	}
	t := table{head: []string{"contender"}}
	for _, col := range shown {
		t.head = append(t.head, col.head)
	}
	type group struct {
		name string
		rows [][]cell
	}
	var groups []group
	for _, c := range contenders {
		row := []cell{{text: c}}
		any := false
		for _, col := range shown {
			v, ok := col.value(c)
			if !ok {
				v = "–"
			}
			any = any || ok
			row = append(row, cell{text: v})
		}
		if !any {
			continue
		}
		name := f.family(c)
		if f.isFloor(c) {
			name = "floors (baselines, no lock logic)"
		}
		if len(groups) == 0 || groups[len(groups)-1].name != name {
			groups = append(groups, group{name: name})
		}
		groups[len(groups)-1].rows = append(groups[len(groups)-1].rows, row)
	}
	for _, g := range groups {
		if len(groups) > 1 {
			t.rows = append(t.rows, []cell{{text: g.name, class: groupClass}})
		}
		t.rows = append(t.rows, g.rows...)
	}
	return t, len(groups) > 0
}

// chunks splits columns into tables of at most maxFigureColumns.
func chunks(cols []column) [][]column {
	var out [][]column
	for len(cols) > maxFigureColumns {
		out = append(out, cols[:maxFigureColumns])
		cols = cols[maxFigureColumns:]
	}
	if len(cols) > 0 {
		out = append(out, cols)
	}
	return out
}

// glanceGroup is one table of the at-a-glance section: the figures a user
// decides on, with the variants this run has.
type glanceGroup struct {
	title string
	cols  []column
}

func (f *figures) glanceGroups() []glanceGroup {
	col := func(head, scenario, variant, metric, unit string) column {
		if unit != "" {
			head += " (" + unit + ")"
		}
		return f.figureColumn(head, scenario, variant, metric)
	}
	speed := []column{
		col("acquire p50, 1 worker", "latency", "w1", "acquire_p50", "us"),
		col("acquire p99, 1 worker", "latency", "w1", "acquire_p99", "us"),
		col("acquire + release p50, 1 worker", "latency", "w1", "cycle_p50", "us"),
	}
	var cpu []column
	if v, w := f.mostWorkers(); v != "" {
		speed = append(speed,
			col(fmt.Sprintf("short locks, %d workers, distinct keys", w), "throughput", v, "cycles_per_sec", "1/s"),
			col(fmt.Sprintf("cycle p99, %d workers", w), "throughput", v, "cycle_p99", "us"))
		cpu = append(cpu,
			col(fmt.Sprintf("coordinator CPU per 1,000 locks, %d workers", w), "throughput", v, "server_cpu_ms_per_1k", "ms"),
			col(fmt.Sprintf("client CPU per 1,000 locks, %d workers", w), "throughput", v, "client_cpu_ms_per_1k", "ms"))
	}
	for _, v := range f.variantsWhere("throughput", func(p results.VariantParams) bool { return p.Contended }) {
		w := f.params("throughput", v).Workers
		speed = append(speed, col(fmt.Sprintf("short locks, %d workers, shared keys", w), "throughput", v, "cycles_per_sec", "1/s"))
		break
	}
	groups := []glanceGroup{
		{"Speed", speed},
		{"Handover (the waiter's grant after the holder stops)", []column{
			col("after release, p50", "handover", "graceful", "p50", "ms"),
			col("after crash, p50", "handover", "crash", "p50", "ms"),
			col("after crash, max", "handover", "crash", "max", "ms"),
			col("after freeze, p50", "handover", "freeze", "p50", "ms"),
		}},
	}
	if v := f.firstVariant("fairness"); v != "" {
		groups = append(groups, glanceGroup{"Contention (" + v + ")", []column{
			col("Jain index (1 = equal shares)", "fairness", v, "jain_index", ""),
			col("FIFO inversions per 1,000 grants", "fairness", v, "fifo_inversions_per_1k", ""),
			col("wait p99", "fairness", v, "wait_p99", "ms"),
			col("coordinator load", "fairness", v, "server_ops_per_sec", "1/s"),
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

func (f *figures) claimsSection(d *document, claims []Claim) {
	d.h2("Claims checked")
	if len(claims) == 0 {
		d.p("This run records no claims to check.")
		return
	}
	d.p("Each claim the contenders' comparison pages make, as a testable statement with the verdict this run's data gives. A verdict is holds or fails only when every repetition agrees with respect to the stated threshold; when the spread straddles the threshold, or the data is missing, it is inconclusive.")
	f.claimTables(d, claims)
}

// tally counts the verdicts of claims.
func tally(claims []Claim) (holds, fails, inconclusive int) {
	for _, c := range claims {
		switch c.Verdict {
		case Holds:
			holds++
		case Fails:
			fails++
		default:
			inconclusive++
		}
	}
	return holds, fails, inconclusive
}

func (f *figures) scenarioSection(d *document, s string) error {
	d.h2(f.title(s))
	f.findings(d, s, f.claims)
	if set := f.r.Parameters.Scenario[s]; len(set) > 0 {
		d.p("Parameters: " + settingsText(set) + ".")
	}
	if len(f.scenarioContenders(s)) == 0 {
		d.p("No figures: this scenario did not run to completion for any contender.")
		f.figureTables(d, s) // only the reasons of the variants not measured
		return nil
	}
	var err error
	switch s {
	case "latency":
		err = f.latencySection(d)
	case "throughput":
		err = f.throughputSection(d)
	case "handover":
		err = f.handoverSection(d)
	case "fairness":
		err = f.fairnessSection(d)
	case "safety":
		err = f.safetySection(d)
	case "failover":
		err = f.failoverSection(d)
	case "scale":
		err = f.scaleSection(d)
	case "chaos":
		err = f.chaosSection(d)
	case workloadScenario:
		err = f.workloadSection(d)
	}
	if err != nil {
		return err
	}
	f.figureTables(d, s)
	return nil
}

// settingsText prints settings as "key value" pairs in key order. A
// value of several lines (a workload file's text) is a document, not a
// parameter: it is named, and left to results.json and its section.
func settingsText(set results.Settings) string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts, documents []string
	for _, k := range keys {
		if strings.Contains(set[k], "\n") {
			documents = append(documents, k)
			continue
		}
		parts = append(parts, k+" "+set[k])
	}
	if len(documents) > 0 {
		parts = append(parts, "in results.json: "+strings.Join(documents, ", "))
	}
	return strings.Join(parts, "; ")
}

// figureTables lists every figure of a scenario: per variant, a row per
// contender and a column per metric, then the contenders the variant was
// not measured for, and why (results.Raw.Skipped).
func (f *figures) figureTables(d *document, s string) {
	variants := f.variants(s)
	for _, x := range f.r.Raw {
		if x.Scenario == s && x.Skipped != "" && !slices.Contains(variants, x.Variant) {
			variants = append(variants, x.Variant)
		}
	}
	for _, v := range variants {
		var cols []column
		var metrics []string
		for _, x := range f.r.Summary {
			if x.Scenario != s || x.Variant != v || x.Metric == "workers" || slices.Contains(metrics, x.Metric) {
				continue // workers is a parameter, in the variant name
			}
			metrics = append(metrics, x.Metric)
			cols = append(cols, f.figureColumn(x.Metric+" ("+x.Unit+")", s, v, x.Metric))
		}
		for i, part := range chunks(cols) {
			t, ok := f.contenderTable(f.scenarioContenders(s), part)
			if !ok {
				continue
			}
			if i == 0 {
				d.p("All figures of " + v + ":")
			}
			d.add(t)
		}
		if why := f.notMeasured(s, v); len(why) > 0 {
			d.p("Not measured in " + v + ":")
			d.add(list{items: why})
		}
	}
}

// notMeasured lists, once each, "contender: reason" for the records of
// scenario s, variant v that say why they were not measured.
func (f *figures) notMeasured(s, v string) []string {
	var out []string
	for _, x := range f.r.Raw {
		if x.Scenario == s && x.Variant == v && x.Skipped != "" {
			if line := x.Contender + ": " + x.Skipped; !slices.Contains(out, line) {
				out = append(out, line)
			}
		}
	}
	return out
}

// locks lists the non-floor contenders of a scenario.
func (f *figures) locks(s string) []string {
	var out []string
	for _, c := range f.scenarioContenders(s) {
		if !f.isFloor(c) {
			out = append(out, c)
		}
	}
	return out
}

// floors lists the floor contenders of a scenario.
func (f *figures) floors(s string) []string {
	var out []string
	for _, c := range f.scenarioContenders(s) {
		if f.isFloor(c) {
			out = append(out, c)
		}
	}
	return out
}

// listFigures prints "a 210 us, b 180 us" for a figure.
func (f *figures) listFigures(s, variant, metric string, contenders []string) string {
	var parts []string
	for _, c := range contenders {
		x, ok := f.row(s, c, variant, metric)
		if why := f.failedFigure(s, c, variant, metric, ok); why != "" {
			parts = append(parts, c+" "+why)
		} else if ok {
			parts = append(parts, c+" "+withUnit(x.Median, x.Unit))
		}
	}
	return strings.Join(parts, ", ")
}

// ranked prints the contenders that have a figure from best to worst,
// figures inside each other's noise tied (see rank and rankText), failed
// ones last; the best contender is returned too, "" when it ties.
func (f *figures) ranked(s, variant, metric string, contenders []string, higherIsBetter bool) (string, string) {
	es := rank(f.rankedEntries(s, variant, metric, contenders), higherIsBetter)
	if len(es) == 0 {
		return "", ""
	}
	best := es[0].contender
	if len(es) > 1 && es[1].place == es[0].place || es[0].failed != "" {
		best = ""
	}
	return rankText(es), best
}

func (f *figures) latencySection(d *document) error {
	for _, v := range f.variants("latency") {
		if f.params("latency", v).Load == results.LoadOpen {
			continue // charted against the offered rate below
		}
		svg, err := f.percentileChart("Acquire latency by percentile ("+v+")", "latency", v, "acquire", "acquire latency (us, log scale)", "us")
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "latency-" + anchor(v), caption: "Acquire latency distribution (the CDF drawn as a percentile plot, tails to the right), " + v + ", all repetitions merged from the HdrHistograms; floors dashed.", svg: svg})
		}
		line, _ := f.ranked("latency", v, "acquire_p50", f.locks("latency"), false)
		if line == "" {
			continue
		}
		text := fmt.Sprintf("Reading (%s): median acquire, fastest lock first: %s.", v, line)
		if fl := f.listFigures("latency", v, "acquire_p50", f.floors("latency")); fl != "" {
			text += " The floors, which do the same round trips with no lock logic, take " + fl + ": what a lock takes above the floor of its kind is its own cost."
		}
		if tail := f.listFigures("latency", v, "acquire_p999", f.locks("latency")); tail != "" {
			text += " The p99.9 tail: " + tail + "."
		}
		d.p(text)
	}
	f.latencyNoise(d)
	return f.openLoopSection(d)
}

func (f *figures) throughputSection(d *document) error {
	svg, err := f.throughputChart()
	if err != nil {
		return err
	}
	if svg != nil {
		d.add(chart{name: "throughput", caption: "Completed acquire+release cycles per second against workers on distinct keys (hold 0); error bars span the repetitions; floors dashed.", svg: svg})
	}
	var text []string
	for _, c := range f.scenarioContenders("throughput") {
		best, bestW := 0.0, 0
		for _, v := range f.variantsWhere("throughput", closedDistinct) {
			w := f.params("throughput", v).Workers
			if x, ok := f.row("throughput", c, v, "cycles_per_sec"); ok && x.Median > best {
				best, bestW = x.Median, w
			}
		}
		if bestW > 0 {
			text = append(text, fmt.Sprintf("%s peaks at %s/s with %d workers", c, num(best), bestW))
		}
	}
	if len(text) == 0 {
		return nil
	}
	s := "Reading: " + strings.Join(text, "; ") + "."
	if v, w := f.mostWorkers(); v != "" {
		if line, _ := f.ranked("throughput", v, "cycles_per_sec", f.locks("throughput"), true); line != "" {
			s += fmt.Sprintf(" At %d workers, most cycles first: %s.", w, line)
		}
		if fl := f.listFigures("throughput", v, "cycles_per_sec", f.floors("throughput")); fl != "" {
			s += " The floors reach " + fl + ", the ceiling for a lock of their kind on this path."
		}
		if cpu := f.listFigures("throughput", v, "server_cpu_ms_per_1k", f.locks("throughput")); cpu != "" {
			s += " Coordinator CPU per 1,000 locks: " + cpu + "."
		}
	}
	for _, v := range f.variantsWhere("throughput", func(p results.VariantParams) bool { return p.Contended }) {
		if line := f.listFigures("throughput", v, "cycles_per_sec", f.locks("throughput")); line != "" {
			s += fmt.Sprintf(" On a small shared key set (%s), where claims wait for each other: %s.", v, line)
		}
	}
	d.p(s)
	return nil
}

func (f *figures) handoverSection(d *document) error {
	svg, err := f.handoverChart()
	if err != nil {
		return err
	}
	if svg != nil {
		d.add(chart{name: "handover", caption: "Time from the holder's stop (release, SIGKILL, SIGSTOP) to the waiter's grant: bars are the p50 of the trials, whiskers the slowest trial (medians across repetitions), log scale. A dashed outline without fill is a failure, not a figure: the waiter never got the lock, drawn at the trial's bound (never > bound).", svg: svg})
	}
	var parts []string
	for _, mode := range f.variants("handover") {
		line := f.listFigures("handover", mode, "p50", f.locks("handover"))
		if line == "" {
			continue
		}
		parts = append(parts, fmt.Sprintf("after %s the median handover is %s", modeText(mode), line))
	}
	if len(parts) == 0 {
		return nil
	}
	s := "Reading: " + strings.Join(parts, "; ") + "."
	if l, ok := f.duration("", "lease"); ok {
		s += fmt.Sprintf(" The lease (or TTL) is %s for every contender: a handover close to it means the waiter had to wait for expiry.", l)
	}
	// Why crash and host-loss differ.
	s += " A SIGKILL on the same host lets the kernel close the killed holder's sockets (a FIN or a reset reaches the server at once), so crash is a process crash, not a machine loss; host-loss drops the holder's packets silently (an embedded fault proxy), as a lost machine or a cut cable would."
	for _, c := range f.locks("handover") {
		var failed []string
		for _, mode := range f.variants("handover") {
			if x, ok := f.row("handover", c, mode, "failed"); ok && x.Max > 0 {
				failed = append(failed, fmt.Sprintf("%s %s", mode, num(x.Median)))
			}
		}
		if len(failed) > 0 {
			s += fmt.Sprintf(" %s had failed trials (median per repetition): %s.", c, strings.Join(failed, ", "))
		}
	}
	d.p(s)
	return nil
}

func modeText(mode string) string {
	switch mode {
	case "graceful":
		return "a controlled release"
	case "crash":
		return "a crash (SIGKILL)"
	case "freeze":
		return "a freeze (SIGSTOP)"
	case "host-loss":
		return "a host loss (packets silently dropped)"
	}
	return mode
}

func (f *figures) fairnessSection(d *document) error {
	for _, v := range f.variants("fairness") {
		svg, err := f.grantsChart(v)
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "fairness-grants-" + anchor(v), caption: "Grants each client got on the hot lock (" + v + "), summed over the repetitions: equal bars are fair.", svg: svg})
		}
		svg, err = f.percentileChart("Wait for the hot lock by percentile ("+v+")", "fairness", v, "wait", "wait (ms, log scale)", "ms")
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "fairness-wait-" + anchor(v), caption: "Wait from request to grant on the hot lock (" + v + "), all clients and repetitions merged.", svg: svg})
		}
		f.clientTable(d, v)
		var parts []string
		for _, c := range f.locks("fairness") {
			var fs []string
			if x, ok := f.row("fairness", c, v, "jain_index"); ok {
				fs = append(fs, "Jain index "+num(x.Median))
			}
			if x, ok := f.row("fairness", c, v, "fifo_inversions_per_1k"); ok {
				fs = append(fs, num(x.Median)+" FIFO inversions per 1,000 grants")
			}
			if x, ok := f.row("fairness", c, v, "wait_p99"); ok {
				fs = append(fs, "wait p99 "+withUnit(x.Median, x.Unit))
			}
			if x, ok := f.row("fairness", c, v, "utilisation"); ok {
				fs = append(fs, fmt.Sprintf("lock held %.0f%% of the time", 100*x.Median))
			}
			if x, ok := f.row("fairness", c, v, "server_ops_per_sec"); ok {
				fs = append(fs, "server load "+withUnit(x.Median, x.Unit))
			}
			if len(fs) > 0 {
				parts = append(parts, c+": "+strings.Join(fs, ", "))
			}
		}
		if len(parts) > 0 {
			d.p(fmt.Sprintf("Reading (%s): %s. A Jain index of 1 means every client got the same number of grants; an inversion is a grant that overtook an earlier pending request; server load counts the commands the coordinator handled per second while clients waited.", v, strings.Join(parts, "; ")))
		}
	}
	return nil
}

// maxClientColumns keeps the per-client table within a 1280-px page.
const maxClientColumns = 8

// clientTable shows the per-client grants of a fairness variant (summed
// over the repetitions) with each client's share: a row per contender, a
// column per client.
func (f *figures) clientTable(d *document, variant string) {
	var clients []string
	grants := map[string]map[string]int64{}
	totals := map[string]int64{}
	for _, c := range f.scenarioContenders("fairness") {
		for _, raw := range f.raws("fairness", c, variant) {
			for _, cl := range raw.Clients {
				g, ok := cl.Counts["grants"]
				if !ok {
					continue
				}
				if !slices.Contains(clients, cl.ID) {
					clients = append(clients, cl.ID)
				}
				if grants[c] == nil {
					grants[c] = map[string]int64{}
				}
				grants[c][cl.ID] += g
				totals[c] += g
			}
		}
	}
	if len(clients) == 0 {
		return
	}
	var cols []column
	for _, id := range clients {
		cols = append(cols, column{head: id, value: func(c string) (string, bool) {
			g, ok := grants[c][id]
			if !ok || totals[c] == 0 {
				return "", false
			}
			return fmt.Sprintf("%d (%.1f%%)", g, 100*float64(g)/float64(totals[c])), true
		}})
	}
	d.p(fmt.Sprintf("Grants per client (%s, all repetitions) and each client's share; with %d clients an equal share is %.1f%%.", variant, len(clients), 100/float64(len(clients))))
	for len(cols) > 0 {
		n := min(len(cols), maxClientColumns)
		if t, ok := f.contenderTable(f.scenarioContenders("fairness"), cols[:n]); ok {
			d.add(t)
		}
		cols = cols[n:]
	}
}
