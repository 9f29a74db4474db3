package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

func (f *figures) intro(d *document) {
	r := f.r
	if r.Partial {
		d.add(paragraph{text: "Partial run: " + r.PartialReason + ". Figures cover only the steps that finished; missing figures are shown as –.", strong: true})
	}
	e := r.Environment
	d.p(fmt.Sprintf("Measured on %s (%d cores, GOMAXPROCS %d, %s/%s), backend %s, network path: %s. Run started %s, finished %s.",
		orUnknown(e.CPUModel), e.Cores, e.GOMAXPROCS, e.OS, e.Arch, e.Backend, orUnknown(e.NetworkPath),
		r.StartedAt.UTC().Format("2006-01-02 15:04:05Z"), finished(r)))
	d.p(fmt.Sprintf("Every figure is the median across the run's %d repetition(s), with the min–max across repetitions in parentheses when they differ. "+
		"Lower is better for latencies, handover times, waits, CPU and coordinator load; higher is better for throughput and the Jain index. "+
		"All of this report is generated from results.json (monolock-bench report DIR/results.json re-renders it); nothing in it is written by hand.",
		r.Parameters.Repetitions))
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

// glanceRow is one decision-oriented row of the table at the top.
type glanceRow struct {
	label    string
	scenario string
	variant  string
	metric   string
	unit     string
}

// glanceRows picks the figures a user decides on, with the variants this
// run actually has.
func (f *figures) glanceRows() []glanceRow {
	rows := []glanceRow{
		{"Uncontended acquire latency, p50", "latency", "w1", "acquire_p50", "us"},
		{"Uncontended acquire latency, p99", "latency", "w1", "acquire_p99", "us"},
		{"Acquire + release cycle, p50 (1 worker)", "latency", "w1", "cycle_p50", "us"},
	}
	if v, w := f.highestDistinctAny(); v != "" {
		rows = append(rows,
			glanceRow{fmt.Sprintf("Short-lock throughput, %d workers, distinct keys", w), "throughput", v, "cycles_per_sec", "1/s"},
			glanceRow{fmt.Sprintf("Short-lock cycle p99, %d workers", w), "throughput", v, "cycle_p99", "us"})
	}
	for _, v := range f.variants("throughput") {
		if strings.HasPrefix(v, "shared-") {
			w, _ := workersOf(v)
			rows = append(rows, glanceRow{fmt.Sprintf("Short-lock throughput, %d workers, shared keys", w), "throughput", v, "cycles_per_sec", "1/s"})
			break
		}
	}
	rows = append(rows,
		glanceRow{"Handover after release, p50", "handover", "graceful", "p50", "ms"},
		glanceRow{"Handover after crash, p50", "handover", "crash", "p50", "ms"},
		glanceRow{"Handover after crash, max", "handover", "crash", "max", "ms"},
		glanceRow{"Handover after freeze, p50", "handover", "freeze", "p50", "ms"})
	if v := f.fairnessVariant(); v != "" {
		rows = append(rows,
			glanceRow{"Fairness: Jain index (1 = equal shares)", "fairness", v, "jain_index", ""},
			glanceRow{"Fairness: FIFO inversions per 1,000 grants", "fairness", v, "fifo_inversions_per_1k", ""},
			glanceRow{"Fairness: wait p99", "fairness", v, "wait_p99", "ms"},
			glanceRow{"Coordinator load under contention", "fairness", v, "server_ops_per_sec", "1/s"})
	}
	if v, w := f.highestDistinctAny(); v != "" {
		rows = append(rows,
			glanceRow{fmt.Sprintf("Coordinator CPU per 1,000 locks (%d workers)", w), "throughput", v, "server_cpu_ms_per_1k", "ms"},
			glanceRow{fmt.Sprintf("Client CPU per 1,000 locks (%d workers)", w), "throughput", v, "client_cpu_ms_per_1k", "ms"})
	}
	return rows
}

func (f *figures) atAGlance(d *document) {
	d.h2("At a glance")
	cols := f.contenders
	head := append([]string{"figure"}, cols...)
	t := table{head: head}
	for _, g := range f.glanceRows() {
		label := g.label
		if g.unit != "" {
			label += " (" + g.unit + ")"
		}
		row := []cell{{text: label}}
		measured := false
		for _, c := range cols {
			x, ok := f.row(g.scenario, c, g.variant, g.metric)
			if !ok {
				row = append(row, cell{text: "–"})
				continue
			}
			measured = true
			row = append(row, cell{text: spread(x)})
		}
		if measured {
			t.rows = append(t.rows, row)
		}
	}
	if len(t.rows) == 0 {
		d.p("No figures: none of the decision figures was measured in this run.")
		return
	}
	d.add(t)
	d.p("– means not measured in this run (the floors take part in latency and throughput only). Floors: tcp-floor is a do-nothing server (connect, one frame in, one out, close), the best any connection-per-claim lock can do; redis-floor is two PINGs on a persistent connection, the best any two-round-trip Redis lock can do.")
}

func (f *figures) claimsSection(d *document, claims []Claim) {
	d.h2("Claims checked")
	d.p("Each claim of the comparison between monolock and Redis/Redlock, as a testable statement with the verdict this run's data gives. A verdict is holds or fails only when every repetition agrees with respect to the stated threshold; when the spread straddles the threshold, or the data is missing, it is inconclusive.")
	t := table{head: []string{"claim", "testable statement", "verdict", "measured", "threshold"}, leftAligned: true, cards: true}
	for _, c := range claims {
		t.rows = append(t.rows, []cell{
			{text: c.Claim}, {text: c.Statement}, {text: string(c.Verdict), class: string(c.Verdict)},
			{text: c.Evidence}, {text: c.Threshold},
		})
	}
	d.add(t)
	var holds, fails, inc int
	for _, c := range claims {
		switch c.Verdict {
		case Holds:
			holds++
		case Fails:
			fails++
		default:
			inc++
		}
	}
	d.p(fmt.Sprintf("%d of %d claims hold, %d fail, %d are inconclusive in this run.", holds, len(claims), fails, inc))
}

// scenarioTitles names the known scenarios.
var scenarioTitles = map[string]string{
	"latency":    "Latency (uncontended)",
	"throughput": "Throughput of short locks",
	"handover":   "Handover",
	"fairness":   "Fairness under contention",
	"safety":     "Safety (the Kleppmann pause)",
	"failover":   "Failover of the coordinator",
	"scale":      "Scale",
}

func (f *figures) scenarioSection(d *document, s string) error {
	title := scenarioTitles[s]
	if title == "" {
		title = s
	}
	d.h2(title)
	if set := f.r.Parameters.Scenario[s]; len(set) > 0 {
		d.p("Parameters: " + settingsText(set) + ".")
	}
	if len(f.scenarioContenders(s)) == 0 {
		d.p("No figures: this scenario did not run to completion for any contender.")
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
	}
	if err != nil {
		return err
	}
	f.figureTable(d, s)
	return nil
}

// settingsText prints settings as "key value" pairs in key order.
func settingsText(set results.Settings) string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + set[k]
	}
	return strings.Join(parts, "; ")
}

// figureTable lists every figure of a scenario: a row per variant and
// metric, a column per contender.
func (f *figures) figureTable(d *document, s string) {
	cols := f.scenarioContenders(s)
	t := table{head: append([]string{"variant", "metric", "unit"}, cols...), labels: 3}
	type fig struct{ variant, metric, unit string }
	var figs []fig
	for _, x := range f.r.Summary {
		if x.Scenario != s || x.Metric == "workers" { // a parameter, in the variant name
			continue
		}
		g := fig{x.Variant, x.Metric, x.Unit}
		if !slices.Contains(figs, g) {
			figs = append(figs, g)
		}
	}
	for _, g := range figs {
		row := []cell{{text: g.variant}, {text: g.metric}, {text: g.unit}}
		for _, c := range cols {
			if x, ok := f.row(s, c, g.variant, g.metric); ok {
				row = append(row, cell{text: spread(x)})
			} else {
				row = append(row, cell{text: "–"})
			}
		}
		t.rows = append(t.rows, row)
	}
	d.add(t)
}

// locks lists the non-floor contenders of a scenario.
func (f *figures) locks(s string) []string {
	var out []string
	for _, c := range f.scenarioContenders(s) {
		if !isFloor(c) {
			out = append(out, c)
		}
	}
	return out
}

// listFigures prints "monolock 210 us, redis 180 us" for a figure.
func (f *figures) listFigures(s, variant, metric string, contenders []string) string {
	var parts []string
	for _, c := range contenders {
		if x, ok := f.row(s, c, variant, metric); ok {
			parts = append(parts, c+" "+withUnit(x.Median, x.Unit))
		}
	}
	return strings.Join(parts, ", ")
}

func (f *figures) latencySection(d *document) error {
	for _, v := range f.variants("latency") {
		svg, err := f.percentileChart("Acquire latency by percentile ("+v+")", "latency", v, "acquire", "acquire latency (us, log scale)", "us")
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "latency-" + anchor(v), caption: "Acquire latency distribution (the CDF drawn as a percentile plot, tails to the right), " + v + ", all repetitions merged from the HdrHistograms; floors dashed.", svg: svg})
		}
		if line := f.listFigures("latency", v, "acquire_p50", f.scenarioContenders("latency")); line != "" {
			text := fmt.Sprintf("Reading (%s): median acquire %s.", v, line)
			if m, ok := f.row("latency", monolock, v, "acquire_p50"); ok {
				if r, ok := f.row("latency", redis, v, "acquire_p50"); ok {
					text += fmt.Sprintf(" monolock takes %s Redis's time;", ratio(m.Median, r.Median))
					if m.Median <= r.Median {
						text += " it is the faster of the two here."
					} else {
						text += " Redis is faster here."
					}
				}
				if fl, ok := f.row("latency", tcpFloor, v, "acquire_p50"); ok {
					text += " The tcp-floor, a server that does nothing but the connection-per-claim exchange, takes " +
						withUnit(fl.Median, fl.Unit) + ": " + aboveFloor("monolock's lock logic and client", m, fl) + "."
				}
			}
			if r, ok := f.row("latency", redis, v, "acquire_p50"); ok {
				if fl, ok := f.row("latency", redisFloor, v, "acquire_p50"); ok {
					text += " The redis-floor (two PINGs) takes " + withUnit(fl.Median, fl.Unit) + ": " + aboveFloor("Redis's lock script", r, fl) + "."
				}
			}
			if tail := f.listFigures("latency", v, "acquire_p999", f.locks("latency")); tail != "" {
				text += " The p99.9 tail: " + tail + "."
			}
			d.p(text)
		}
	}
	return nil
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
		for _, v := range f.variants("throughput") {
			w, ok := workersOf(v)
			if !ok || !strings.HasPrefix(v, "distinct-") {
				continue
			}
			if x, ok := f.row("throughput", c, v, "cycles_per_sec"); ok && x.Median > best {
				best, bestW = x.Median, w
			}
		}
		if bestW > 0 {
			text = append(text, fmt.Sprintf("%s peaks at %s/s with %d workers", c, num(best), bestW))
		}
	}
	if len(text) > 0 {
		s := "Reading: " + strings.Join(text, "; ") + "."
		if v, w := f.highestDistinct(monolock, redis); v != "" {
			m, _ := f.row("throughput", monolock, v, "cycles_per_sec")
			r, _ := f.row("throughput", redis, v, "cycles_per_sec")
			s += fmt.Sprintf(" At %d workers Redis completes %s monolock's cycles/s", w, ratio(r.Median, m.Median))
			if fl, ok := f.row("throughput", tcpFloor, v, "cycles_per_sec"); ok {
				if m.Median <= fl.Median {
					s += fmt.Sprintf("; monolock reaches %.0f%% of the tcp-floor, the ceiling of any connection-per-claim lock on this path", 100*m.Median/fl.Median)
				} else {
					s += fmt.Sprintf("; monolock (%s/s) exceeds the tcp-floor (%s/s), which a ceiling should not allow: at this worker count the run's noise is larger than the difference", num(m.Median), num(fl.Median))
				}
			}
			s += "."
			if ms, ok := f.row("throughput", monolock, v, "server_cpu_ms_per_1k"); ok {
				if rs, ok := f.row("throughput", redis, v, "server_cpu_ms_per_1k"); ok {
					s += fmt.Sprintf(" Per 1,000 locks the monolock server spends %s of CPU, Redis %s.", withUnit(ms.Median, ms.Unit), withUnit(rs.Median, rs.Unit))
				}
			}
		}
		for _, v := range f.variants("throughput") {
			if strings.HasPrefix(v, "shared-") {
				if line := f.listFigures("throughput", v, "cycles_per_sec", f.locks("throughput")); line != "" {
					s += fmt.Sprintf(" On a small shared key set (%s), where claims wait for each other: %s.", v, line)
				}
			}
		}
		d.p(s)
	}
	return nil
}

func (f *figures) handoverSection(d *document) error {
	svg, err := f.handoverChart()
	if err != nil {
		return err
	}
	if svg != nil {
		d.add(chart{name: "handover", caption: "Time from the holder's stop (release, SIGKILL, SIGSTOP) to the waiter's grant: bars are the p50 of the trials, whiskers the slowest trial (medians across repetitions), log scale.", svg: svg})
	}
	var parts []string
	for _, mode := range f.variants("handover") {
		line := f.listFigures("handover", mode, "p50", f.locks("handover"))
		if line == "" {
			continue
		}
		parts = append(parts, fmt.Sprintf("after %s the median handover is %s", modeText(mode), line))
	}
	if len(parts) > 0 {
		s := "Reading: " + strings.Join(parts, "; ") + "."
		if l, ok := f.lease(monolock); ok {
			s += fmt.Sprintf(" The lease (monolock) and TTL (Redis, Redlock) is %s for every contender: a handover close to it means the waiter had to wait for expiry.", l)
		}
		for _, c := range f.locks("handover") {
			var failed []string
			for _, mode := range f.variants("handover") {
				if x, ok := f.failedTrials(c, mode); ok && x.Max > 0 {
					failed = append(failed, fmt.Sprintf("%s %s", mode, num(x.Median)))
				}
			}
			if len(failed) > 0 {
				s += fmt.Sprintf(" %s had failed trials (median per repetition): %s.", c, strings.Join(failed, ", "))
			}
		}
		d.p(s)
	}
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

// clientTable shows the per-client grants of a fairness variant (summed
// over the repetitions) with each client's share, one column per contender.
func (f *figures) clientTable(d *document, variant string) {
	var clients, cols []string
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
					cols = append(cols, c)
				}
				grants[c][cl.ID] += g
				totals[c] += g
			}
		}
	}
	if len(clients) == 0 {
		return
	}
	t := table{head: append([]string{"client"}, cols...)}
	for _, id := range clients {
		row := []cell{{text: id}}
		for _, c := range cols {
			g, ok := grants[c][id]
			if !ok || totals[c] == 0 {
				row = append(row, cell{text: "–"})
				continue
			}
			row = append(row, cell{text: fmt.Sprintf("%d (%.1f%%)", g, 100*float64(g)/float64(totals[c]))})
		}
		t.rows = append(t.rows, row)
	}
	d.p(fmt.Sprintf("Grants per client (%s, all repetitions) and each client's share; with %d clients an equal share is %.1f%%.", variant, len(clients), 100/float64(len(clients))))
	d.add(t)
}

// aboveFloor says what a figure adds above its floor, or that the two are
// within noise when the floor is not below it.
func aboveFloor(what string, x, floor results.Row) string {
	if x.Median > floor.Median {
		return what + " cost " + withUnit(x.Median-floor.Median, x.Unit) + " on top of it"
	}
	return fmt.Sprintf("%s cost nothing measurable on top of it here (%s vs the floor's %s: the difference is noise)",
		what, withUnit(x.Median, x.Unit), withUnit(floor.Median, floor.Unit))
}
